"""Phrases -> meaning, from the KB's own words.

The grammar hands the compiler runs of words (phrases). Here they are matched against the KB's
labels and alternative labels (one name-index query for every word run of a phrase) and
classified: a ranking mode, a kind of thing, a qualifier (a value of an object-valued query
key), a workload, a process, a precision, a chassis, hardware ('2 x rtx 4090'), a setting
('128k context', 'a 1600 w psu') or a year. Nothing here names a domain word: the classes the
compiler asks for are ontology IRIs, and the words are data.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from kbq.errors import QueryError, UnknownTermError
from kbq.lang import ast
from kbq.lang.catalog import FAMILY, OWL_CLASS, PREFIXES, Catalog, Key, Mode, Setting, Term, k
from kbq.store.names import normalise

GPU = k("GPU")
MODEL = k("Model")
APPLICATION = k("Application")
AREA = k("ApplicationArea")
PROCESS = k("Process")
PRECISION = k("Precision")
OPTIMIZER = k("Optimizer")
DATASET = k("Dataset")
CHASSIS_KIND = k("ChassisKind")
CHASSIS_THRESHOLD = k("ChassisThreshold")
GPU_FAMILY = k("GpuFamily")
WORKLOAD_TYPES = (FAMILY, MODEL, APPLICATION, AREA)
_QUANTITY = re.compile(r"^(\$?)(\d+(?:\.\d+)?)(.*)$")
_TIMES = {"x", "×", "*"}
_DATA_SIZE = "https://kbq.dev/kb/DataSize"  # the dimension a memory budget is given in


class Quantity(NamedTuple):
    value: float  # in the base unit of its dimension
    text: str
    column: int


class Subject(NamedTuple):
    """'best value consumer gpu', 'cheapest cloud instance', 'frameworks', 'gpus supported'."""

    cls: Term
    mode: Mode | None = None
    count: int | None = None  # type: ignore[assignment]  # a field named like tuple.count
    qualifiers: tuple[tuple[Key, Term, ast.Phrase], ...] = ()
    relation: Key | None = None  # 'supported' + by -> the key 'supported by'


class Workload(NamedTuple):
    term: Term | None
    process: Term | None
    precision: Term | None
    phrase: ast.Phrase


class SettingValue(NamedTuple):
    setting: Setting
    value: float | None
    term: Term | None  # a precision for the KV-cache setting
    column: int

    @property
    def given(self) -> object:
        """What the scenario receives: the named term, else the number, else True (a flag)."""
        return self.term if self.term is not None else (True if self.value is None else self.value)


class Hardware(NamedTuple):
    count: int  # type: ignore[assignment]  # a field named like tuple.count
    gpu: Term | None  # None: 'on 8 gpus' (any GPU), or a memory budget
    column: int
    memory: float | None = None  # a memory budget per card in GB ('on a 24gb gpu', 'in 2 x 24gb'): no card named


class Chassis(NamedTuple):
    kind: Term
    dense: bool
    cards: int | None
    column: int
    text: str


class Year(NamedTuple):
    text: str
    column: int


class PrecisionChoice(NamedTuple):
    term: Term
    column: int


class Ceiling(NamedTuple):
    key: Key
    value: float
    text: str
    column: int


class Condition(NamedTuple):
    expr: ast.Expr
    column: int


Item = SettingValue | Hardware | Chassis | Year | PrecisionChoice | Ceiling | Condition


class Words:
    """Interprets the phrases of one question."""

    def __init__(self, catalog: Catalog, text: str) -> None:
        self.cat = catalog
        self.text = text

    # --- helpers -------------------------------------------------------------------------------

    def error(self, message: str, column: int | None, **extra: list[str]) -> QueryError:
        return QueryError(message, query=self.text, column=column, **extra)

    def content(self, phrase: ast.Phrase) -> ast.Phrase:
        """The phrase without filler words ('the', 'a')."""
        return ast.Phrase(tuple(w for w in phrase.words if normalise(w.text) not in self.cat.fillers))

    def runs(self, phrase: ast.Phrase) -> dict[tuple[int, int], list[Term]]:
        """Every word run [i, j) of the phrase with the terms it names (one query for all)."""
        words = phrase.words
        spans = {(i, j): _join(words[i:j]) for i in range(len(words)) for j in range(i + 1, min(len(words), i + 8) + 1)}
        found = self.cat.lookup(list(spans.values()) + [_singular(t) for t in spans.values()])
        out = {}
        for span, text in spans.items():
            terms = found.get(normalise(text)) or found.get(normalise(_singular(text))) or []
            out[span] = terms
        return out

    def name(self, phrase: ast.Phrase, classes: tuple[str, ...] | None, what: str) -> Term:
        """The one term (of these classes) the phrase names: as typed, else without filler words,
        else without a plural 's'."""
        content = self.content(phrase) or phrase
        wanted = list(classes) if classes else None
        for candidate in dict.fromkeys((phrase.text, content.text, _singular(content.text))):
            if self.cat.candidates(candidate, wanted):
                return self.cat.resolve(candidate, wanted, query=self.text, column=phrase.column, what=what)
        return self.cat.resolve(content.text, wanted, query=self.text, column=content.column, what=what)

    def quantity(self, words: tuple[ast.Word, ...], dimension: str | None, what: str) -> Quantity:
        """'24gb', '1.5 tb/s', '$2000', '128k', '40%', '1600 w': the value in the base unit."""
        if not words:
            raise self.error(f"{what} needs a number", None)
        text = " ".join(w.text for w in words)
        match = _QUANTITY.match(words[0].text)
        if not match:
            raise self.error(f"'{text}' is not a number for {what}", words[0].column)
        dollar, number, suffix = match.groups()
        unit_text = suffix + "".join(w.text for w in words[1:])
        value = float(number)
        if not unit_text and not dollar:
            return Quantity(value, text, words[0].column)
        for candidate in [dollar + unit_text, unit_text] if dollar else [unit_text]:
            if not candidate:
                continue
            unit = self.cat.unit(candidate, dimension)
            if unit is not None:
                return Quantity(value * unit.factor, text, words[0].column)
        if dollar and not unit_text:
            unit = self.cat.unit("$", dimension)
            if unit is not None:
                return Quantity(value * unit.factor, text, words[0].column)
        same = self.cat.unit_symbols(dimension)
        hint = f"; {what} takes {', '.join(same)}" if same else f"; {what} takes a plain number"
        raise UnknownTermError(f"unknown unit '{unit_text or dollar}' for {what}{hint}", query=self.text, column=words[0].column)

    # --- the subject of a question -------------------------------------------------------------

    def subject(self, phrase: ast.Phrase, link: str | None) -> Subject:
        """[mode [N]] [qualifier ...] kind [relation words]: e.g. 'best value consumer gpu'."""
        words = self.content(phrase).words or phrase.words
        phrase = ast.Phrase(words)
        mode, count, start = None, None, 0
        for j in range(len(words), 0, -1):  # the longest mode first
            named = self.cat.modes.get(normalise(_join(words[:j])))
            if named is not None:
                mode, start = named, j
                break
        if mode is not None and mode.takes_number and start < len(words) and words[start].text.isdigit():
            count, start = int(words[start].text), start + 1
        runs = self.runs(phrase)
        # the kind: the longest run naming a class, with the relation words after it
        best: tuple[int, int, Term] | None = None
        for (i, j), found in sorted(runs.items(), key=lambda item: (item[0][1] - item[0][0], -item[0][0]), reverse=True):
            if i < start:
                continue
            classes = [t for t in found if OWL_CLASS in t.types]
            if classes:
                best = (i, j, classes[0])
                break
        if best is None:
            raise UnknownTermError(
                f"'{phrase.slice(start).text or phrase.text}' names no kind of thing kbq lists "
                "(gpus, frameworks, sdks, models, applications, instances ...)",
                query=self.text,
                column=phrase.slice(start).column if start < len(words) else phrase.column,
                suggestions=self.cat.suggest(phrase.slice(start).text, [OWL_CLASS]),
            )
        i, j, cls = best
        relation = None
        if j < len(words) or link == "by":
            tail = _join(words[j:]) + (" by" if link == "by" else "")
            relation = self.cat.keys.get(normalise(tail))
            if relation is None:
                column = words[j].column if j < len(words) else phrase.end
                raise self.error(
                    f"'{tail}' is not a relation kbq knows after '{cls.label}'",
                    column,
                    expected=sorted({k.label for k in self.cat.gpu_keys() if k.is_object}),
                )
        qualifiers = self.qualifiers(phrase.slice(start, i), runs, offset=start)
        return Subject(cls, mode, count, qualifiers, relation)

    def qualifiers(
        self, phrase: ast.Phrase, runs: dict[tuple[int, int], list[Term]], offset: int
    ) -> tuple[tuple[Key, Term, ast.Phrase], ...]:
        """'consumer', 'blower amd': values of object-valued keys (longest runs first)."""
        out = []
        words = phrase.words
        i = 0
        while i < len(words):
            for j in range(len(words), i, -1):
                for term in runs.get((i + offset, j + offset), []):
                    keys = self.cat.keys_for_range(term.types)
                    if keys:
                        out.append((keys[0], term, phrase.slice(i, j)))
                        break
                else:
                    continue
                i = j
                break
            else:
                raise UnknownTermError(
                    f"'{words[i].text}' is not a mode, a kind or a qualifier kbq knows",
                    query=self.text,
                    column=words[i].column,
                    suggestions=self.cat.suggest(words[i].text),
                )
        return tuple(out)

    # --- workloads -----------------------------------------------------------------------------

    def workload(self, target: ast.Target) -> Workload:
        """'bert', 'resnet-50 training', 'inference of bert', 'llama 3.1 70b inference at int4'."""
        phrase = target.phrase if target.of is None else ast.Phrase(target.of.words + target.phrase.words)
        words = self.content(phrase).words or phrase.words
        phrase = ast.Phrase(words)
        runs = self.runs(phrase)
        term = process = precision = None
        term_start = term_end = -1
        i = 0
        if (sized := self.generic(words, runs)) is not None:  # 'a 70b model': a generic dense decoder of that size
            term, term_start, term_end = sized[0], 0, sized[1]
            i = term_end
        while i < len(words):
            for j in range(len(words), i, -1):
                found = runs.get((i, j), [])
                if term is None and len({t.iri for t in found if t.types & set(WORKLOAD_TYPES)}) > 1:
                    self.cat.resolve(_join(words[i:j]), WORKLOAD_TYPES, query=self.text, column=words[i].column)  # raises
                picked = _pick(found, WORKLOAD_TYPES) if term is None else None
                if picked is not None:
                    term, term_start, term_end = picked, i, j
                elif process is None and (p := _pick(found, (PROCESS,))) is not None:
                    process = p
                elif precision is None and (p := _pick(found, (PRECISION,))) is not None:
                    precision = p
                else:
                    continue
                i = j
                break
            else:
                rest = phrase.slice(i)
                stop = len(words)  # leave a process or precision the phrase ends with out of the unknown part
                for j in range(i + 1, len(words)):
                    if all(_pick(runs.get((j, e), []), (PROCESS, PRECISION)) is not None for e in (len(words),)):
                        stop = j
                        break
                start = term_start if term_end == i else i  # 'llama 9000': report the whole name
                rest = phrase.slice(start, stop)
                raise UnknownTermError(
                    f"unknown workload '{rest.text}'",
                    query=self.text,
                    column=rest.column,
                    suggestions=self.models_of_size(rest.text) or self.cat.suggest(rest.text, [*WORKLOAD_TYPES, PROCESS]),
                )
        return Workload(term, process, precision, phrase)

    def generic(self, words: tuple[ast.Word, ...], runs: dict[tuple[int, int], list[Term]]) -> tuple[Term, int] | None:
        """A size the KB has no name for, with the words that name the generic profile after it
        ('70b', '70b model', '13b llm'): the generic model and the words it takes."""
        from kbq.lang.workload import generic

        if not words or any(runs.get((0, j)) for j in range(1, len(words) + 1)):
            return None  # a name of the KB starts here ('70b' is no name, 'gpt-3 175b' is read as a name)
        found = generic.term(self.cat, words[0].text)
        declared = generic.profile(self.cat)
        if found is None or declared is None:
            return None
        for n in range(min(3, len(words) - 1), 0, -1):
            if " ".join(normalise(w.text) for w in words[1 : 1 + n]) in declared.nouns:
                return found, 1 + n
        return found, 1

    def models_of_size(self, text: str, limit: int = 8) -> list[str]:
        """'70b', '8x7b': the models whose parameter count is within 5% of a size named alone, the
        best-sourced first (a publisher's card before a generated catalog entry), then the closest."""
        match = re.fullmatch(r"(?:(\d+)x)?(\d+(?:\.\d+)?)\s*b", text.strip().lower())
        if match is None or self.cat.run is None:
            return []
        size = float(match.group(2)) * 1e9 * (int(match.group(1)) if match.group(1) else 1)
        rows = self.cat.run(
            PREFIXES + "SELECT ?l (MIN(?r) AS ?rank) (SAMPLE(?p) AS ?count) WHERE { ?m a kbq:Model ; rdfs:label ?l ; "
            "kbq:parameterCount ?p "
            f"FILTER(xsd:double(?p) >= {size * 0.95:.0f}e0 && xsd:double(?p) <= {size * 1.05:.0f}e0) "
            "OPTIONAL { ?m dcterms:source/kbq:tier/kbq:trustRank ?r } } GROUP BY ?l "
            f"ORDER BY ?rank ABS(xsd:double(?count) - {size:.0f}e0) ?l LIMIT {int(limit)}"
        ).rows
        return [str(r[0]) for r in rows]

    # --- clauses: with / on / in / at / under --------------------------------------------------

    def loose(self, clause: ast.Loose) -> list[Item]:
        words = tuple(w for w in clause.words.words if w.kind != "a" and normalise(w.text) not in self.cat.fillers)
        if not words:
            raise self.error(f"'{clause.keyword}' needs something after it", clause.column + len(clause.keyword))
        if clause.keyword == "with" and any(w.kind == "comparator" for w in words):
            from kbq.lang.parse import parse

            start = words[0].column - 1
            stop = words[-1].column - 1 + len(words[-1].text)
            expr = parse(self.text[start:stop], start="expr_start", offset=start, whole=self.text)
            return [Condition(expr, words[0].column)]
        if clause.keyword == "under":
            return [self.ceiling(words)]
        phrase = ast.Phrase(words)
        if (hardware := self.hardware(phrase)) is not None:  # before a year: 'on a 4090' names a card
            return [hardware]
        if clause.keyword in ("on", "in") and len(words) == 1 and re.fullmatch(r"\d{4}(-\d{2}){0,2}", words[0].text):
            return [Year(words[0].text, words[0].column)]
        if clause.keyword in ("on", "in") and (budget := self.budget(words)) is not None:
            return [budget]
        if clause.keyword in ("on", "in") and (chassis := self.chassis(phrase)) is not None:
            return [chassis]
        if clause.keyword == "at":
            found = self.cat.candidates(phrase.text, [PRECISION])
            if len(found) == 1:
                return [PrecisionChoice(found[0], phrase.column)]
            for k in range(len(words) - 1, 0, -1):  # 'at exl2 4.65bpw': a format, then its settings
                head = self.cat.candidates(ast.Phrase(words[:k]).text, [PRECISION])
                rest = self.settings(ast.Phrase(words[k:])) if len(head) == 1 else None
                if rest is not None:
                    return [PrecisionChoice(head[0], phrase.column), *rest]
        if clause.keyword == "with" and (optimizer := self.optimizer(phrase)) is not None:
            return [optimizer]
        if clause.keyword in ("on", "in", "with") and (dataset := self.dataset(phrase)) is not None:
            return [dataset]
        settings = self.settings(phrase)
        if settings is not None:
            return settings
        if (bare := self.bare_quantity(words)) is not None:
            return [bare]
        if clause.keyword == "with" and (floor := self.floor(words)) is not None:
            return [floor]
        expected = {
            "with": "a setting (128k context, batch 4, a 1600 w psu, mfu 40%, zero 3, offload) or a condition (memory >= 24gb)",
            "on": "a chassis (a 4-gpu workstation, dense 9-card server), hardware (2 x rtx 4090) or a year",
            "in": "a chassis (an 8-card server), hardware or a year",
            "at": "a precision or format (fp16, bf16, fp8, int4, q4_k_m) or a rate ($0.15/kwh)",
            "for": "a setting of the training (90 epochs, 1t tokens)",
        }[clause.keyword]
        raise UnknownTermError(
            f"cannot read '{phrase.text}' after '{clause.keyword}': expected {expected}",
            query=self.text,
            column=phrase.column,
            suggestions=self.cat.suggest(phrase.text, [PRECISION, CHASSIS_KIND, GPU] if clause.keyword != "with" else None),
        )

    def _unit_dimensions(self, words: tuple[ast.Word, ...]) -> set[str]:
        """The dimensions of the unit of a bare quantity ('24gb', '$0.15/kwh', '40 %'); empty if none."""
        if not words or words[0].kind != "number" or (match := _QUANTITY.match(words[0].text)) is None:
            return set()
        unit_text = match.group(1) + match.group(3) + "".join(w.text for w in words[1:])
        return {u.dimension for u in self.cat.units.get(normalise(unit_text), [])}

    def bare_quantity(self, words: tuple[ast.Word, ...]) -> SettingValue | None:
        """'at $0.15/kwh', 'at 40%': a quantity whose unit belongs to exactly one setting's dimension."""
        dims = self._unit_dimensions(words)
        found = {s.name: s for s in self.cat.settings.values() if s.dimension in dims and s.dimension is not None}
        if len(found) != 1:
            return None
        setting = next(iter(found.values()))
        quantity = self.quantity(words, setting.dimension, setting.label)
        return SettingValue(setting, quantity.value, None, words[0].column)

    def floor(self, words: tuple[ast.Word, ...]) -> Condition | None:
        """'with 24gb': a quantity whose unit belongs to exactly one higher-is-better GPU key reads as
        'KEY >= quantity' (the catalog's units and keys decide; several keys is an error naming them)."""
        dims = self._unit_dimensions(words)
        keys = [k for k in self.cat.gpu_keys() if k.higher_is_better and not k.is_object and k.dimension in dims]
        if not keys:
            return None
        text = " ".join(w.text for w in words)
        if len(keys) > 1:
            raise self.error(
                f"'with {text}' could be {' or '.join(k.key for k in keys)}: write it as a condition "
                f"(with {keys[0].key} >= {text})",
                words[0].column,
            )
        key = ast.Word(keys[0].key, words[0].column)
        return Condition(ast.Comparison(ast.Ratio(key), ">=", ast.Phrase(words)), words[0].column)

    def ceiling(self, words: tuple[ast.Word, ...]) -> Ceiling:
        unit_texts = [normalise(_unit_part(w.text)) for w in words[:2]]
        quantity_dims = {u.dimension for t in unit_texts if t for u in self.cat.units.get(t, [])}
        if words[0].text.startswith("$"):
            quantity_dims.add(self.cat.units["$"][0].dimension if self.cat.units.get("$") else "")
        for key in self.cat.gpu_keys():
            if not key.higher_is_better and key.dimension in quantity_dims and not key.is_object:
                quantity = self.quantity(words, key.dimension, key.key)
                return Ceiling(key, quantity.value / key.factor, quantity.text, words[0].column)
        raise self.error(
            f"'under {' '.join(w.text for w in words)}' needs an amount with a unit of a lower-is-better key "
            "(e.g. under $2000, under 300 w)",
            words[0].column,
        )

    def hardware(self, phrase: ast.Phrase) -> Hardware | None:
        """'2 x rtx 4090', '64 x h100 sxm5', '8 gpus', '4 h100s'; a bare GPU name ('an h100 sxm5') is one card."""
        words = phrase.words
        if words and words[0].kind != "number":
            if words[0].text.lower() in ("a", "an", "one", "single", "a single") and len(words) > 1:
                words = words[1:]
            found = [t for t in self.cat.candidates(ast.Phrase(words).text, [GPU, GPU_FAMILY]) if t.is_a(GPU, GPU_FAMILY)]
            if len(found) > 1:
                self.cat.resolve(ast.Phrase(words).text, [GPU, GPU_FAMILY], query=self.text, column=words[0].column, what="GPU")
            return Hardware(1, found[0], phrase.column) if len(found) == 1 else None
        if not words:
            return None
        if len(words) == 1:  # a number that is a card's name ('4090', '3090'), not a count or a year
            named = [t for t in self.cat.candidates(words[0].text, [GPU, GPU_FAMILY]) if t.is_a(GPU, GPU_FAMILY)]
            if len(named) == 1:
                return Hardware(1, named[0], phrase.column)
        head = words[0].text
        rest = words[1:]
        suffix = re.sub(r"^\d+", "", head)
        if not head[: len(head) - len(suffix)].isdigit():
            return None
        count = int(head[: len(head) - len(suffix)])
        if suffix.lower() in _TIMES or suffix == "":
            if suffix == "" and rest and rest[0].text.lower() in _TIMES:
                rest = rest[1:]
        elif rest:
            return None
        else:
            rest = (ast.Word(suffix, words[0].column + len(head) - len(suffix)),)
        if not rest:
            return None
        name = ast.Phrase(rest)
        for text in (name.text, _singular(name.text)):
            found = self.cat.candidates(text, [GPU, GPU_FAMILY, OWL_CLASS])
            gpus = [t for t in found if t.is_a(GPU, GPU_FAMILY)]
            if len(gpus) == 1:
                return Hardware(count, gpus[0], phrase.column)
            if len(gpus) > 1:
                self.cat.resolve(text, [GPU, GPU_FAMILY], query=self.text, column=name.column, what="GPU")
            if any(t.iri == GPU for t in found):
                return Hardware(count, None, phrase.column)
        return None

    def budget(self, words: tuple[ast.Word, ...]) -> Hardware | None:
        """'24gb', 'a 24gb gpu', '2 x 24gb', '2x 24 gb cards', '8gb of vram': a memory budget per card,
        hardware with only its memory known. Trailing words must name the GPU class or the memory key."""
        rest = list(words)
        count = 1
        if len(rest) > 2 and rest[0].text.isdigit() and rest[1].text.lower() in _TIMES:
            count, rest = int(rest[0].text), rest[2:]
        elif len(rest) > 1 and (m := re.fullmatch(r"(\d+)[x×*]", rest[0].text.lower())):
            count, rest = int(m.group(1)), rest[1:]
        while len(rest) > 1 and (
            normalise(rest[-1].text) == "of"
            or any(t.iri == GPU for t in self.cat.candidates(rest[-1].text))
            or getattr(self.cat.keys.get(normalise(rest[-1].text)), "dimension", None) == _DATA_SIZE
        ):
            rest.pop()
        quantity_words = tuple(rest)
        if _DATA_SIZE not in self._unit_dimensions(quantity_words):
            return None
        quantity = self.quantity(quantity_words, _DATA_SIZE, "memory")
        return Hardware(count, None, words[0].column, memory=quantity.value)

    def chassis(self, phrase: ast.Phrase) -> Chassis | None:
        """'a 4-gpu workstation', 'dense 9-card chassis', 'an 8-card server', 'a desktop'."""
        words = list(phrase.words)
        dense, cards = False, None
        rest: list[ast.Word] = []
        i = 0
        while i < len(words):
            w = words[i]
            norm = normalise(w.text)
            if any(t.is_a(CHASSIS_THRESHOLD) for t in self.cat.candidates(w.text)):
                dense = True
            elif (
                w.kind == "number"
                and w.text.isdigit()
                and i + 1 < len(words)
                and self._is_gpu_word(words[i + 1].text.lstrip("-"))
            ):
                cards = int(w.text)
                i += 1
            elif (m := re.fullmatch(r"(\d+)-?([a-z]+)", norm)) and self._is_gpu_word(m.group(2)):
                cards = int(m.group(1))
            elif w.kind == "number" and w.text.isdigit() and i + 1 < len(words) and words[i + 1].text.lower() in _TIMES:
                cards = int(w.text)
                i += 1
            else:
                rest.append(w)
            i += 1
        text = self.text[phrase.column - 1 : phrase.end - 1]
        if not rest:
            return None
        found = self.cat.candidates(_join(tuple(rest)), [CHASSIS_KIND])
        if len(found) != 1:
            return None
        return Chassis(found[0], dense, cards, phrase.column, text)

    def _is_gpu_word(self, text: str) -> bool:
        return any(t.iri == GPU for t in self.cat.candidates(text)) or any(
            t.iri == GPU for t in self.cat.candidates(_singular(text))
        )

    def optimizer(self, phrase: ast.Phrase) -> SettingValue | None:
        """'with 8-bit adam', 'with adafactor': an optimizer the KB names, as the optimizer setting."""
        return self._named_setting(phrase, "optimizer", OPTIMIZER)

    def dataset(self, phrase: ast.Phrase) -> SettingValue | None:
        """'on imagenet', 'on coco': a dataset the KB names (its training examples), as the dataset setting."""
        return self._named_setting(phrase, "dataset", DATASET)

    def _named_setting(self, phrase: ast.Phrase, name: str, kind: str) -> SettingValue | None:
        """The setting `name` holding the one thing of class `kind` the phrase names (None otherwise)."""
        setting = next((s for s in self.cat.settings.values() if s.name == name), None)
        found = self.cat.candidates(phrase.text, [kind]) if setting is not None else []
        if setting is None or len(found) != 1:
            return None
        return SettingValue(setting, None, found[0], phrase.column)

    def settings(self, phrase: ast.Phrase) -> list[Item] | None:
        """'128k context batch 4', 'a 1600 w psu', 'mfu 40%', 'zero 3 offload', 'fp8 kv cache',
        '1t tokens', '4.65bpw': setting labels, each with the number next to it."""
        words = _unglued(phrase.words, self.cat.settings)
        spans: list[tuple[int, int, Setting]] = []
        i = 0
        while i < len(words):
            for j in range(min(len(words), i + 4), i, -1):
                found = self.cat.settings.get(normalise(_join(words[i:j])))
                if found is not None:
                    spans.append((i, j, found))
                    i = j
                    break
            else:
                i += 1
        if not spans:
            return None
        used: set[int] = set()
        out: list[Item] = []
        for n, (i, j, setting) in enumerate(spans):
            for k_ in range(i, j):
                used.add(k_)
            if setting.flag:
                out.append(SettingValue(setting, None, None, words[i].column))
                continue
            after_stop = spans[n + 1][0] if n + 1 < len(spans) else len(words)
            before_start = spans[n - 1][1] if n > 0 else 0
            # 'and' joins two settings ('2k input and 512 output'): a value never reaches across it
            joined = [x for x in range(len(words)) if normalise(words[x].text) == "and"]
            after_stop = min([after_stop, *(x for x in joined if x >= j)])
            before_start = max([before_start, *(x + 1 for x in joined if x < i)])
            after = [x for x in range(j, after_stop) if x not in used]
            before = [x for x in range(before_start, i) if x not in used]
            if setting.dimension is None:  # a term-valued setting ('fp8 kv cache')
                cand = before or after
                if not cand:
                    raise self.error(f"'{setting.label}' needs a value (e.g. fp8 {setting.label})", words[i].column)
                value_words = ast.Phrase(tuple(words[x] for x in cand))
                term = self.name(value_words, (PRECISION,), "precision")
                used.update(cand)
                out.append(SettingValue(setting, None, term, words[i].column))
                continue
            if after and words[after[0]].kind == "number":
                cand = after if len(after) <= 2 else after[:2]
            elif before and words[before[0]].kind == "number":
                cand = before
            else:
                raise self.error(
                    f"'{setting.label}' needs a number (e.g. '{setting.label} 4' or '4 {setting.label}')", words[i].column
                )
            if len(cand) == 2 and words[cand[1]].kind == "number":
                cand = cand[:1]
            quantity = self.quantity(tuple(words[x] for x in cand), setting.dimension, setting.label)
            used.update(cand)
            out.append(SettingValue(setting, quantity.value, None, words[i].column))
        leftover = [words[x] for x in range(len(words)) if x not in used and normalise(words[x].text) != "and"]
        if leftover:  # ('2k input and 512 output': 'and' joins settings)
            return None
        return out


def _join(words: tuple[ast.Word, ...] | list[ast.Word]) -> str:
    return " ".join(w.text for w in words)


def _singular(text: str) -> str:
    return text[:-1] if len(text) > 2 and text.lower().endswith("s") and not text.lower().endswith("ss") else text


def _unit_part(text: str) -> str:
    match = _QUANTITY.match(text)
    return match.group(3) if match else text


def _pick(found: list[Term], classes: tuple[str, ...]) -> Term | None:
    picked = [t for t in found if t.types & set(classes)]
    return picked[0] if len(picked) == 1 else (picked[0] if picked and all(p.iri == picked[0].iri for p in picked) else None)


def _unglued(words: tuple[ast.Word, ...], settings: dict[str, Setting]) -> tuple[ast.Word, ...]:
    """'4.65bpw' -> '4.65' 'bpw' when the letters are a setting's name (a unit like '128k' stays whole)."""
    out: list[ast.Word] = []
    for w in words:
        m = re.fullmatch(r"(\d+(?:\.\d+)?)([a-z][a-z/]*)", w.text.lower())
        if m and normalise(m.group(2)) in settings:
            out += [ast.Word(m.group(1), w.column, "number"), ast.Word(m.group(2), w.column + len(m.group(1)))]
        else:
            out.append(w)
    return tuple(out)
