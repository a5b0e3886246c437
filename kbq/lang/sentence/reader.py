"""The reader: one sentence against one KB -> the canonical question it means (its names, quantities,
intent, and the intent's templates filled and checked)."""

from __future__ import annotations

import itertools
import re

from kbq.errors import QueryError
from kbq.lang.catalog import FAMILY, OWL_CLASS, PREFIXES, Catalog, Run, Term
from kbq.lang.sentence.checks import _compiles, _first_ranked, _form
from kbq.lang.sentence.lexicon import (
    _ACTIVE,
    _CJK,
    _MAX_RUN,
    _NUMBER,
    _PUNCTUATION,
    _SIZE,
    _SLOT,
    COUNT,
    DATA_SIZE,
    MONEY,
    AmbiguousSentenceError,
    CheckFn,
    Intent,
    MissingHardwareError,
    MissingModelError,
    Reading,
    SentenceError,
    Span,
    UnanswerableSentenceError,
    _fmt,
    _keywords,
    _say,
    _singular,
    _tokens,
    lexicon,
)
from kbq.lang.words import APPLICATION, AREA, CHASSIS_KIND, GPU, GPU_FAMILY, MODEL, PRECISION, PROCESS
from kbq.store.names import normalise

_SETTING_REACH = 6  # words after a setting's name where its scaled number ('128k') may still be
_REPORTED = r"\d+(?:\.\d+)?(?:-\d+(?:\.\d+)?)?"  # a number or a range ('18-22') a sentence reports
_VARIANT_WORDS = 2  # words of a side that names only a variant of the card before it ('80gb', '16 gb')
_CARD_GAP = 4  # words from a count of cards to their memory ('two graphics cards with 24gb')
_READINGS_SHOWN = 6  # the readings an ambiguous sentence gets back (each answers)
_SIZED_KEPT = 64  # models of a size the reader weighs (the ambiguity names the first four)


def _literal(text: str) -> str:
    """A SPARQL string literal."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


_COMPARE = "compare it with kbq's estimate"
_TOP_NOTE = "no card named: read with {gpu}, the first of 'best gpu for {workload}'; name a card for another"
_RUN_NOTE = "no card named: read with {setup} (kb/training_runs.ttl); name a card and a count ('on 64 x h100') for another"


class Reader:
    """Reads one sentence against one KB."""

    def __init__(self, text: str, catalog: Catalog, run: Run, unknown: str = "") -> None:
        self.text = text
        self.unknown = frozenset(unknown.lower().split())  # the name the language refused: never dropped
        self.unknown_text = unknown
        self.cat = catalog
        self.run = run
        self.lex = lexicon(catalog, chinese=bool(_CJK.search(text)))
        self.toks = _tokens(text.lower())
        self.notes: list[str] = []
        self.id_format: tuple[str, str] | None = None  # (suffix, format label) a model id's packaging says
        self._hint, self._narrowed = "", False  # the name before a size, and whether it named a model of that size
        self._mixture = False  # the size has an active size after it ('30b-a3b'): not a dense decoder
        self.observed: set[str] = set()  # numbers of what the sentence says a workload needs or uses
        self._model_named = False  # the sentence names a workload (not only a process)
        self._deictic: list[str] = []  # words standing for a model not named ('this model', 'it')
        self._near_read = False  # near names corrected (once, before the first spans)
        self._run_read: set[str] = set()  # the workloads whose published training run was looked up (once each)
        self._family_note = ""  # the note of a family read as its smallest size (dropped when a size follows it)
        self._processes: list[str] = []  # the IRIs of the processes the sentence names
        self._spans_seen: list[Span] = []  # the spans of the last slots read
        self._roles: set[str] = set()  # their roles

    # --- what the sentence names --------------------------------------------------------------

    def spans(self) -> list[Span]:
        if not self._near_read:
            self._near_read = True
            self._near_names(self._spans())
            self._shared_stem()
        return self._spans()

    def _shared_stem(self) -> None:
        """'a100 40gb vs 80gb', 'h100 pcie or sxm': the side after an alternative word (kbq:wordRole
        'alternative') that names no card, only a variant, takes the first words of the card before it
        when they then name another card of the KB ('a100 80gb': NVIDIA A100 SXM4 80GB), said."""
        for c, word in enumerate(self.toks):
            if self.lex.roles.get(f"alternative:{word}") != "alternative":
                continue
            before = Reader(" ".join(self.toks[:c]), self.cat, self.run)._spans()  # each side read alone
            after = Reader(" ".join(self.toks[c + 1 :]), self.cat, self.run)._spans()
            left = next((s for s in before if s.role == "gpu" and s.end == c and s.terms), None)
            right = next((s for s in after if s.start == 0), None)
            if left is None or (right is not None and right.role == "gpu"):
                continue
            stem = self.toks[left.start : left.end]
            for end in range(min(len(self.toks), c + 1 + _VARIANT_WORDS), c + 1, -1):
                side = self.toks[c + 1 : end]
                for k in range(len(stem) - 1, 0, -1):
                    words = stem[:k] + side
                    read = Reader(" ".join(words), self.cat, self.run)._spans()
                    card = read[0] if len(read) == 1 else None
                    if card is None or card.role != "gpu" or (card.start, card.end) != (0, len(words)):
                        continue
                    if {t.iri for t in card.terms} & {t.iri for t in left.terms}:
                        continue  # the same card again: not a variant of it
                    self.toks = self.toks[: c + 1] + words + self.toks[end:]
                    self.notes.append(f"read '{' '.join(side)}' as {card.text}: the variant of the card before it")
                    return

    def _near_names(self, spans: list[Span]) -> None:
        """Typos of the KB's name words ('llamma 3', 'rthx 3060') and the tail of one model's name
        ('large-v3') in words no span reads: corrected when they then name a card or a model, said."""
        from kbq.lang.sentence.near import card_tail, corrected, tail

        covered = {i for s in spans for i in range(s.start, s.end)}
        known = set(self._known_words())
        toks, notes = corrected(self.toks, self.cat, known, covered)
        out: list[str] = []
        skip = -1
        for i, word in enumerate(toks):
            if i == skip:
                continue
            glued = f"{word}{toks[i + 1]}" if i + 1 < len(toks) and i + 1 not in covered and toks[i + 1].isalpha() else ""
            card = card_tail(glued, self.cat) if glued else None  # '4090 d': another card than the 4090
            if card is not None:
                out += _tokens(card.lower())
                notes.append(f"read '{word} {toks[i + 1]}' as {card}, the KB's one card whose name ends so")
                skip = i + 1
                continue
            card = card_tail(word, self.cat) if i not in covered else None
            if card is not None:
                out += _tokens(card.lower())
                notes.append(f"read '{word}' as {card}, the KB's one card whose name ends so")
                continue
            model = tail(word, self.cat) if i not in covered and "-" in word else None
            if model is None:
                out.append(word)
                continue
            out += _tokens(model.lower())
            notes.append(f"read '{word}' as {model}, the KB's one model whose name ends so")
        self.toks = out
        self.notes += notes

    def _known_words(self) -> set[str]:
        """Words the reader or the language reads as something (never corrected to a name)."""
        cues = {w for intent in self.lex.intents for cue in intent.cues for w in cue.split()}
        roles = {w.split(":", 1)[-1] for w in self.lex.roles}
        return (
            cues
            | roles
            | set(self.cat.keys)
            | set(self.cat.units)
            | set(self.cat.settings)
            | set(self.cat.modes)
            | set(self.cat.fillers)
            | set(_keywords())
        )

    def _spans(self) -> list[Span]:
        toks = self.toks
        runs = {(i, j): " ".join(toks[i:j]) for i in range(len(toks)) for j in range(i + 1, min(len(toks), i + _MAX_RUN) + 1)}
        texts = list(runs.values())
        texts += [_singular(t) for t in texts]
        texts += [t.split("/", 1)[1] for t in texts if "/" in t]  # a Hub id's name without its organisation
        found = self.cat.lookup(texts)
        candidates: list[Span] = []
        for (i, j), text in runs.items():
            if self.lex.roles.get(f"deictic:{text}") == "deictic":  # 'this model', 'local ai': no model named
                candidates.append(Span(i, j, "deictic", text))
                continue
            if j - i == 1 and self.lex.roles.get(text) == "ignore":
                continue
            for variant in (text, _singular(text)):
                span = self._classify(i, j, found.get(normalise(variant), []))
                if span is not None:
                    candidates.append(span)
                    break
            else:
                if j - i == 1 and (span := self._model_id(i, toks[i])) is not None:
                    candidates.append(span)
                mode = self.cat.modes.get(normalise(text))
                if mode is not None:
                    candidates.append(Span(i, j, "mode", mode.label))
                key = self.cat.keys.get(normalise(text)) if j - i <= 3 else None
                if key is not None:  # 'memory bandwidth', 'tdp', 'cuda cores': a figure of a card, by its query key
                    candidates.append(Span(i, j, "key", key.key))
        candidates += self._quantities()
        chosen: list[Span] = []
        taken: set[int] = set()
        for span in sorted(candidates, key=lambda s: (-(s.end - s.start), s.start, _ROLE_ORDER.get(s.role, 9))):
            if taken & set(range(span.start, span.end)):
                continue
            chosen.append(span)
            taken |= set(range(span.start, span.end))
        chosen = self._refined(self._card_with_memory(chosen))
        for span in chosen:  # a number inside a model's name ('deepseek-r1 671 b') is the name's, kept by it
            if span.role in ("workload", "precision"):  # '4 bit': the format's
                self.observed.update(m.group(1) for tok in toks[span.start : span.end] if (m := re.fullmatch(r"(\d+)b?", tok)))
        named = {i for s in chosen if s.role != "key" for i in range(s.start, s.end)}  # a key word ('cards') counts nothing
        return [self._counted(s, named) for s in sorted(chosen)]

    def _refined(self, chosen: list[Span]) -> list[Span]:
        """Several processes named ('fine-tune llama 3 8b with lora'): one another refines is dropped
        (kbq:refines in kb/sentences.ttl: LoRA fine-tuning is the fine-tuning meant)."""
        processes = [s for s in chosen if s.role == "process" and s.terms]
        if len(processes) < 2:
            return chosen
        from kbq.lang import terms

        values = " ".join(terms.iri(t.iri) for s in processes for t in s.terms)
        rows = self.run(
            PREFIXES
            + f"SELECT ?general WHERE {{ VALUES ?p {{ {values} }} VALUES ?general {{ {values} }} ?p kbq:refines ?general }}"
        ).rows
        general = {str(r[0]) for r in rows}
        return [s for s in chosen if not (s in processes and all(t.iri in general for t in s.terms))]

    def _card_with_memory(self, chosen: list[Span]) -> list[Span]:
        """A card and its memory side by side ('a 12gb 3060', '3060 (12gb)'): one card when the KB names
        that variant ('RTX 3060 12GB'); otherwise both stay (the card, and the budget it was said to have)."""
        spans = sorted(chosen)
        for a, b in itertools.pairwise(spans):
            pair = {a.role, b.role}
            if pair != {"gpu", "budget"} or b.start - a.end > 1:
                continue
            gpu, budget = (a, b) if a.role == "gpu" else (b, a)
            names = [f"{gpu.text} {budget.text}", f"{' '.join(self.toks[gpu.start : gpu.end])} {budget.text}"]
            found = self.cat.lookup(names)
            terms = [t for n in names for t in found.get(normalise(n), []) if t.types & {GPU, GPU_FAMILY}]
            others: list[Term] = []
            if len({t.iri for t in terms}) != 1:  # '3 x rtx 3090 (72gb)': the memory of all the cards counted
                terms, others = self._variant_with(gpu, budget, self._count_before(gpu, set())[0].count)
            start, end = min(a.start, b.start), max(a.end, b.end)
            if len({t.iri for t in terms}) == 1:
                merged = Span(start, end, "gpu", _say(terms[0].label, names[0]), 1, (terms[0],))
                return self._card_with_memory([s for s in chosen if s not in (a, b)] + [merged])  # the next pair
            if others:  # the card and its family hold no variant of that memory: the memory said is the hardware
                self.notes.append(
                    f"the KB has no {' '.join(self.toks[gpu.start : gpu.end])} with {budget.text.upper()} ("
                    f"{', '.join(t.label for t in others)}): read as a {budget.text.upper()} memory budget"
                )
                return self._card_with_memory([s for s in chosen if s not in (a, b)] + [budget._replace(start=start, end=end)])
        return chosen

    def _variant_with(self, gpu: Span, budget: Span, count: int) -> tuple[list[Term], list[Term]]:
        """The variant of the card named (itself, or a member of its family: kbq:gpuFamily) whose memory
        is the memory said beside it ('a100 80g', 'rtx 4090 24gb'): ([that card], []); when none has it,
        ([], every variant); ([], []) when the KB holds no memory for them or several have it."""
        from kbq.lang import terms

        value, _ = self._number(budget.text)
        iris = " ".join(terms.iri(t.iri) for t in gpu.terms)
        if value is None or not iris:
            return [], []
        value /= count
        rows = self.run(
            PREFIXES + f"SELECT DISTINCT ?v ?l ?m WHERE {{ VALUES ?named {{ {iris} }} "
            "{ ?named a kbq:GPU BIND(?named AS ?v) } UNION { ?v kbq:gpuFamily ?named } "
            "UNION { ?named kbq:gpuFamily ?f . ?v kbq:gpuFamily ?f } "
            "?v a kbq:GPU ; rdfs:label ?l ; kbq:memory ?m } ORDER BY ?m ?l"
        ).rows
        variants = [Term(str(v), str(label), frozenset({GPU})) for v, label, _ in rows]
        found = [t for t, row in zip(variants, rows, strict=True) if abs(float(str(row[2])) - value) < 0.5]
        return (found, []) if found else ([], variants)

    def _classify(self, i: int, j: int, found: list[Term]) -> Span | None:
        text = " ".join(self.toks[i:j])
        for role, classes in _ROLES:
            terms = tuple(t for t in found if t.types & set(classes))
            if terms:
                preferred = [t for t in terms if t.is_a(MODEL)] or list(terms)
                return Span(i, j, role, _say(preferred[0].label, text) if len(preferred) == 1 else text, 1, tuple(terms))
        qualifiers = [t for t in found if self.cat.keys_for_range(t.types)]
        if qualifiers and not any(OWL_CLASS in t.types for t in found):
            return Span(i, j, "qualifier", text, 1, tuple(qualifiers))
        return None

    def _model_id(self, i: int, token: str) -> Span | None:
        """A Hub id or a model file's name ('meta-llama/Llama-3.1-8B-Instruct', 'llama-3.1-8b-instruct-gguf'):
        fine-tune and packaging suffixes (kb/sentences.ttl) come off one at a time until a model is named,
        with its organisation (a Hub id in the KB) or without (a label)."""
        org, _, name = token.rpartition("/")
        parts = re.split(r"[-_]", name) if "-" in name or "_" in name else []
        dropped: list[str] = []
        fmt: tuple[str, str] | None = None
        while len(parts) > 1 and self.lex.roles.get(parts[-1]) == "suffix":
            dropped.insert(0, parts.pop())
            if dropped[0] in self.lex.formats:  # the leftmost says the format ('gptq-int4': GPTQ; 'bnb-4bit': NF4)
                fmt = (dropped[0], self.lex.formats[dropped[0]])
            base = "-".join(parts)
            for candidate in ([f"{org}/{base}"] if org else []) + [base]:
                found = [t for t in self.cat.candidates(candidate) if t.is_a(MODEL)]
                if len(found) == 1:
                    self.notes.append(
                        f"'{token}' read as {found[0].label}: '{'-'.join(dropped)}' names a fine-tune or packaging of "
                        "the same architecture"
                    )
                    self.id_format = fmt
                    return Span(i, i + 1, "workload", _say(found[0].label, base), 1, tuple(found))
        return None

    def _quantities(self) -> list[Span]:
        """Memory budgets ('24gb card', 'on 2 x 24gb', 'my 8gb card', 'is 16 gb enough'), money
        ('under $1500', '$2000 budget') and settings with their number ('32k context', 'batch size 8')."""
        toks = self.toks
        out: list[Span] = []
        for i, tok in enumerate(toks):
            if re.fullmatch(_REPORTED, tok) and (rate := self._rate_follows(i + 1)):  # '18-22 tokens per second': reported
                self.observed.update(re.findall(r"\d+", tok))
                said = f"{tok} {' '.join(toks[i + 1 : i + 1 + rate])}"
                self.notes.append(f"'{said}' is what the sentence reports: left out of the reading; {_COMPARE}")
                continue
            unit_tokens = 1
            value, unit = self._number(tok)
            if value is None:
                continue
            if not unit and i + 1 < len(toks) and not self._number(toks[i + 1])[0]:
                unit, unit_tokens = toks[i + 1], 2
            if unit and self.lex.roles.get(f"gigabytes:{unit}") == "gigabytes":
                unit = "gb"  # '80g', '24 gigs': gigabytes as people write them (kb/sentences.ttl)
            if tok.startswith("$") or unit in self._money_units():
                scale = 1000 if unit == "k" else 1
                out.append(Span(i, i + unit_tokens, "money", f"${_fmt(value * scale)}"))
                continue
            if unit and self._dimension(unit) == DATA_SIZE:
                before = toks[max(0, i - 2) : i]
                if any(self.lex.roles.get(w) == "need" for w in before):
                    self.observed.add(match.group() if (match := re.match(r"\d+", tok)) else tok)
                    continue
                end = i + unit_tokens
                if any(self.lex.roles.get(f"ram:{' '.join(toks[end : end + n])}") == "ram" for n in (1, 2)):  # '96gb ddr5'
                    self.observed.add(match.group() if (match := re.match(r"\d+", tok)) else tok)
                    continue
                for n in (2, 1):  # 'of vram', 'card'
                    if end + n <= len(toks) and " ".join(toks[end : end + n]) in self._budget_words():
                        end += n
                        break
                out.append(Span(i, end, "budget", f"{_fmt(value)}{unit}"))
        out += self._settings()
        return out

    def _rate_follows(self, j: int) -> int:
        """The words of a rate ('tokens/second', 'tokens per second', 't/s') starting at word j (0: none)."""
        toks = self.toks
        return next((n for n in (3, 2, 1) if j + n <= len(toks) and self.lex.roles.get(f"rate:{' '.join(toks[j : j + n])}")), 0)

    def _settings(self) -> list[Span]:
        toks = self.toks
        out = []
        for i in range(len(toks)):
            for j in range(min(len(toks), i + 3), i, -1):
                setting = self.cat.settings.get(normalise(" ".join(toks[i:j])))
                if setting is None or setting.flag or setting.dimension is None:
                    continue
                after = toks[j] if j < len(toks) else ""
                before = toks[i - 1] if i > 0 else ""
                if after in ("per", "/s") or (j + 1 < len(toks) and toks[j + 1] in ("second", "sec", "s")):
                    break
                for k, number in ((j, after), (i - 1, before)):
                    counted = setting.dimension == COUNT  # '100b tokens': a count in billions, not a model's size
                    value, unit = self._number(number, sizes=counted and k == i - 1)
                    if value is not None and (not unit or unit in ("k", "m", "b", "t")):
                        lo, hi = min(i, k), max(j, k + 1)
                        out.append(Span(lo, hi, "setting", f"{number} {setting.label}"))
                        break
                else:  # 'context length can go up to 128k': a scaled number a few words after the setting
                    ahead = [w for w in toks[j : j + _SETTING_REACH] if self._number(w)[1] in ("k", "m")]
                    if ahead:
                        out.append(Span(i, j, "setting", f"{ahead[0]} {setting.label}"))
                break
        return out

    def _number(self, tok: str, sizes: bool = False) -> tuple[float | None, str]:
        """A number and its unit ('24gb', '$1500', '128k'); a model size ('70b') only when `sizes`."""
        match = _NUMBER.match(tok)
        if not match or (_SIZE.match(tok) and not sizes):
            return None, ""
        return float(match.group(1)), match.group(2)

    def _dimension(self, unit: str) -> str | None:
        found = self.cat.units.get(normalise(unit), [])
        return found[0].dimension if len(found) == 1 else (DATA_SIZE if any(u.dimension == DATA_SIZE for u in found) else None)

    def _money_units(self) -> set[str]:
        return {name for name, units in self.cat.units.items() if any(u.dimension == MONEY for u in units)}

    def _budget_words(self) -> set[str]:
        return {w for w, role in self.lex.roles.items() if role == "budget" and ":" not in w}

    def _counted(self, span: Span, taken: set[int]) -> Span:
        """'two 3090s', '2 x rtx 4090', '2x 4090', '4 h100s', 'dual 3090', '四卡h800': the count before a
        GPU or a budget; a count after it ('h100*8'), multiplied by a count of machines before it
        ('2台 h100*8': two machines of eight, kbq:wordRole 'machine')."""
        if span.role not in ("gpu", "budget"):
            return span
        counted, machines = self._count_before(span, taken)
        if counted is span and span.role == "budget":
            counted = self._count_of_cards(span, taken)
        toks, end = self.toks, span.end
        if end + 1 < len(toks) and toks[end] in ("x", "×", "*") and re.fullmatch(r"\d{1,3}", toks[end + 1]):
            per = int(toks[end + 1])
            self.observed.add(toks[end + 1])
            if counted.count > 1:
                self.observed.add(str(counted.count))
            total = per * counted.count if machines or counted.count == 1 else counted.count
            note = f"{counted.count} machines of {per} x {span.text}: read as {total} x {span.text}"
            if machines and counted.count > 1 and note not in self.notes:
                self.notes.append(note)
            return counted._replace(end=end + 2, count=total)
        return counted

    def _count_of_cards(self, span: Span, taken: set[int]) -> Span:
        """'two graphics cards with 24gb vram': a count of cards a few words before their memory budget
        (the words between are card nouns and words the reader ignores, at least one a card noun)."""
        toks = self.toks
        for gap in range(2, _CARD_GAP + 1):
            i = span.start - gap
            if i < 0 or any(k in taken for k in range(i, span.start)):
                break
            nouns = {w for key in self.lex.roles if key.startswith("budget:") for w in key.split(":", 1)[1].split()}
            between = toks[i + 1 : span.start]
            if not any(w in nouns for w in between) or not all(w in nouns or self.lex.roles.get(f"ignore:{w}") for w in between):
                continue
            count = self._count_word(toks[i])
            if count is None and re.fullmatch(r"\d{1,2}", toks[i]):
                count = int(toks[i])
            if count is not None:
                return span._replace(start=i, count=count)
        return span

    def _count_word(self, words: str) -> int | None:
        """The number a count word says ('two', 'dual', '四卡'), also at the end of a Chinese word the
        segmenter left whole ('有四卡': 'have four cards')."""
        if words in self.lex.counts:
            return self.lex.counts[words]
        if _CJK.search(words):
            ends = [w for w in self.lex.counts if _CJK.search(w) and " " not in w and words.endswith(w)]
            if ends:
                return self.lex.counts[max(ends, key=len)]
        return None

    def _count_before(self, span: Span, taken: set[int]) -> tuple[Span, bool]:
        """The count before a GPU or a budget, and whether it counts machines ('2台')."""
        toks = self.toks
        for skip in (0, 1):  # 'two 3090s', 'two used 3090s', '四卡h800'
            i = span.start - skip
            if skip and (i <= 0 or i in taken or self._number(toks[i])[0] is not None):
                break
            machines = bool(skip) and self.lex.roles.get(f"machine:{toks[i]}") == "machine"
            if i > 0 and toks[i - 1] in ("x", "×", "*"):
                i -= 1
            for n in (2, 1):
                words = " ".join(toks[max(0, i - n) : i])
                if i - n >= 0 and (count := self._count_word(words)) is not None:
                    machines = machines or any(  # '两台': the count word itself counts machines
                        words.endswith(w.split(":", 1)[1]) for w, role in self.lex.roles.items() if role == "machine" and ":" in w
                    )
                    return span._replace(start=i - n, count=count), machines
            if i > 0 and (i - 1) not in taken and re.fullmatch(r"\d+x?|x\d+", toks[i - 1]):
                return span._replace(start=i - 1, count=int(toks[i - 1].strip("x"))), machines
        return span, False

    # --- intent and templates -----------------------------------------------------------------

    def cued(self) -> list[Intent]:
        """The intents whose cues occur, highest priority first; a cue found only inside a longer cue
        of another intent does not count ('how many' inside 'how many tokens' is the speed's)."""
        texts = (" " + " ".join(self.toks) + " ", self.text.lower())  # words; raw text for Chinese cues
        matched: list[tuple[Intent, list[tuple[int, int, int]]]] = []  # (text, start, end) of each cue found
        for intent in self.lex.intents:
            places = []
            for cue in intent.cues:
                which = 1 if _CJK.search(cue) else 0
                needle = cue.replace(" ", "") if which else f" {cue} "
                at = texts[which].find(needle)
                while at >= 0:
                    places.append((which, at, at + len(needle)))
                    at = texts[which].find(needle, at + 1)
            if places:
                matched.append((intent, places))

        def covered(place: tuple[int, int, int], intent: Intent) -> bool:
            which, start, end = place
            return any(
                o_which == which and o_start <= start and end <= o_end and o_end - o_start > end - start
                for other, others in matched
                if other is not intent
                for o_which, o_start, o_end in others
            )

        found = [(intent, places) for intent, places in matched if not all(covered(p, intent) for p in places)]
        figure = "gpu" in self._roles and not self._roles & {"workload", "process"}  # a card's figure may be asked
        keys = self._key_places() if figure else []

        def weak(place: tuple[int, int, int], intent: Intent) -> bool:  # 'vram' in 'rtx 4090 vram': the key's own word
            return _cue_at(texts, place) in intent.weak or any(place[0] == 0 and a <= place[1] and place[2] <= b for a, b in keys)

        strong = [intent for intent, places in found if any(not weak(p, intent) for p in places)]
        roled = [i for i in self.lex.intents if i.role and i.role in self._roles and i not in [f for f, _ in found]]
        if strong:
            return strong
        return sorted([intent for intent, _ in found] + roled, key=lambda i: -i.priority)  # weak cues count alone

    def _key_places(self) -> list[tuple[int, int]]:
        """Where the query keys the sentence names ('vram', 'memory bandwidth') are in its joined words."""
        starts = list(itertools.accumulate([1] + [len(t) + 1 for t in self.toks]))  # ' ' + words joined by ' '
        return [(starts[s.start] - 1, starts[s.end] - 1 + 1) for s in self._spans_seen if s.role == "key"]

    def slots(self, spans: list[Span]) -> dict[str, str]:
        self._spans_seen = spans
        self._roles = {s.role for s in spans}
        by_role: dict[str, list[Span]] = {}
        for span in spans:
            by_role.setdefault(span.role, []).append(span)
        slots: dict[str, str] = {}
        workloads = by_role.get("workload", [])
        self._model_named = bool(workloads)
        self._deictic = [s.text for s in by_role.get("deictic", [])]
        if workloads:
            process = by_role.get("process", [])
            slots["workload"] = self._sized_family(workloads[0]) + (f" {process[0].text}" if process else "")
        elif "process" in by_role:
            slots["workload"] = by_role["process"][0].text
        hardware = [s for s in spans if s.role in ("gpu", "budget")]
        for name, span in zip(("hardware", "hardware2"), hardware, strict=False):
            slots[name] = f"{span.count} x {span.text}" if span.count > 1 else span.text
        gpus = [s for s in spans if s.role == "gpu"]
        for name, span in zip(("gpu", "gpu2"), gpus, strict=False):
            slots[name] = span.text
        precision = by_role.get("precision", [])
        slots["at"] = f" at {precision[0].text}" if precision else ""
        process = by_role.get("process", [])  # a process named without a model: the reverse question's 'for PROCESS'
        slots["for"] = f" for {process[0].text}" if process and not workloads else ""
        if not precision:
            self._id_format(slots)
        settings = [s.text for s in by_role.get("setting", [])]
        slots["with"] = _settings_clause(settings)
        money = by_role.get("money", [])
        slots["under"] = f" under {money[0].text}" if money else ""
        self._processes = [t.iri for span in by_role.get("process", []) for t in span.terms]
        keys = by_role.get("key", [])
        if keys:
            slots["key"] = keys[0].text
        mode = by_role.get("mode", [])
        qualifiers = " ".join(s.text for s in by_role.get("qualifier", []))
        slots["mode"] = " ".join(p for p in ((mode[0].text if mode else "best"), qualifiers) if p)
        return slots

    def _id_format(self, slots: dict[str, str]) -> None:
        """'-AWQ', '-FP8', '72b-4bit': the weights are stored in that format (when the question names none)."""
        if self.id_format is not None and not slots.get("at"):
            suffix, label = self.id_format
            slots["at"] = f" at {label}"
            self.notes.append(f"weights in {label}: the name's '-{suffix}' suffix says how they are stored")

    def _sized_family(self, span: Span) -> str:
        """A family named without a size ('can I run llama 3 on a 4060 ti') reads as the size the
        policy of kb/sentences.ttl takes (kb:FamilyWithoutSize: its smallest, whether the family runs at
        all), said with its other sizes: the question about a family has no figure of its own (the
        grammar refuses it and names the sizes). No policy: the family as named."""
        models = [t for t in span.terms if t.is_a(MODEL)]
        policy = self.run(
            PREFIXES + "SELECT ?which ?say WHERE { ?p a kbq:FamilySizePolicy ; kbq:familySize ?which ; rdfs:label ?say } LIMIT 1"
        ).rows
        if len(models) != 1 or not policy:
            return self._base(span)
        from kbq.lang import terms

        which, say = str(policy[0][0]), str(policy[0][1])
        family = terms.iri(models[0].iri)
        rows = self.run(
            PREFIXES + f"SELECT ?l WHERE {{ ?v kbq:variantOf {family} ; rdfs:label ?l ; kbq:parameterCount ?p "
            f"FILTER NOT EXISTS {{ {family} kbq:parameterCount ?own }} }} "
            f"ORDER BY {'DESC(?p)' if which == 'largest' else '?p'} ?l"
        ).rows
        if not rows or _say(str(rows[0][0]), "") == "":  # no size, or one the grammar cannot read back
            return self._base(span)
        sizes = [str(r[0]) for r in rows]
        others = f"; its other sizes: {', '.join(sizes[1:])} (name one to ask about it)" if len(sizes) > 1 else ""
        self._family_note = f"{models[0].label} is a family named without a size: read as its {say}, {sizes[0]}{others}"
        self.notes.append(self._family_note)
        return _say(sizes[0], span.text)

    def _base(self, span: Span) -> str:
        """A fine-tune the KB links to its base (kbq:baseModel) without facts of its own reads as the
        base, whose architecture it shares; said in the answer."""
        models = [t for t in span.terms if t.is_a(MODEL)]
        if len(models) != 1:
            return span.text
        from kbq.lang import terms

        rows = self.run(
            PREFIXES + f"SELECT ?l WHERE {{ {terms.iri(models[0].iri)} kbq:baseModel ?b . ?b rdfs:label ?l "
            f"FILTER NOT EXISTS {{ {terms.iri(models[0].iri)} kbq:numLayers ?n }} }} LIMIT 1"
        ).rows
        if not rows:
            return span.text
        base = str(rows[0][0])
        self.notes.append(f"{models[0].label} read as {base}: a fine-tune of it (kbq:baseModel), with the same architecture")
        return _say(base, span.text)

    def fill(self, template: str, slots: dict[str, str]) -> str | None:
        names = _SLOT.findall(template)
        if "topgpu" in names and "topgpu" not in slots and "gpu" not in slots and "workload" in slots:
            top = _first_ranked(f"best gpu for {slots['workload']}{slots.get('at', '')}", self.cat, self.run)
            if top is not None:
                slots["topgpu"] = top
        if ("runtokens" in names or "rungpu" in names) and "rungpu" not in slots and "runtokens" not in slots:
            if "workload" in slots and slots["workload"] not in self._run_read:
                self._run_read.add(slots["workload"])
                self._run_tokens(slots, named_tokens=self._names_setting(template, "runtokens"))
        if any(n not in slots for n in names):
            return None
        return _SLOT.sub(lambda m: slots[m.group(1)], template)

    def _names_setting(self, template: str, slot: str) -> bool:
        """Whether the sentence names the setting the template fills from a slot ('{runtokens} tokens': a
        token count), so the slot's default does not replace what the sentence says."""
        after = re.search(r"\{" + slot + r"\}\s+([^\s{]+)", template)
        setting = self.cat.settings.get(normalise(after.group(1))) if after else None
        return setting is not None and any(
            s.role == "setting" and s.text.split(" ", 1)[-1] == setting.label for s in self._spans_seen
        )

    def _run_tokens(self, slots: dict[str, str], *, named_tokens: bool = False) -> None:
        """The tokens of the KB's published training run of the model asked ('how long to train llama 3
        8b on 64 h100s': Llama 3 8B's pretraining, 15T tokens), for a time question that names none; the
        answer says whose run it is. Nothing when the KB holds no run of that model."""
        if self._processes:  # a fine-tuning (a process that refines another, kbq:refines) is not the pretraining run
            from kbq.lang import terms

            values = " ".join(terms.iri(p) for p in self._processes)
            if self.run(PREFIXES + f"SELECT ?p WHERE {{ VALUES ?p {{ {values} }} ?p kbq:refines ?general }} LIMIT 1").rows:
                return
        words = slots["workload"].split()
        labels = " ".join(_literal(" ".join(words[:n])) for n in range(len(words), 0, -1))
        rows = self.run(
            PREFIXES + f"SELECT ?run ?tokens ?gpu ?count WHERE {{ VALUES ?l {{ {labels} }} ?m a kbq:Model ; rdfs:label ?l . "
            "?r kbq:trainedModel ?m ; kbq:trainingTokens ?tokens ; rdfs:label ?run "
            "OPTIONAL { ?r kbq:trainingGpu ?g . ?g rdfs:label ?gpu } OPTIONAL { ?r kbq:trainingGpuCount ?count } } "
            "ORDER BY DESC(STRLEN(?l)) DESC(xsd:double(?tokens)) LIMIT 1"
        ).rows
        if not rows:
            return
        run, tokens = str(rows[0][0]), float(str(rows[0][1]))
        if rows[0][2] is not None and (gpu := _say(str(rows[0][2]), "")):
            # the run's setup as published (its count x its card), so the answer compares with the published time;
            # a run that states no count reads on 1 card, said so
            count = int(float(str(rows[0][3]))) if rows[0][3] is not None else 1
            slots["rungpu"] = f"{count} x {gpu}" if count > 1 else gpu
            slots["runsetup"] = (
                f"{count} x {gpu}, the setup of {run} as published"
                if rows[0][3] is not None
                else f"1 x {gpu}, the card of {run}: the run states no GPU count, so the time is for one card "
                "(its GPU-hours compare with the published ones)"
            )
        if named_tokens:  # 'how long to train phi-4 on 1t tokens': the run's setup, the sentence's tokens
            return
        scale = next(((s, u) for s, u in ((1e12, "t"), (1e9, "b"), (1e6, "m"), (1e3, "k")) if tokens >= s), (1.0, ""))
        slots["runtokens"] = f"{_fmt(round(tokens / scale[0], 3))}{scale[1]}"
        self.notes.append(
            f"no token count named: read with {slots['runtokens']} tokens, those of {run} (kb/training_runs.ttl); "
            "name one ('on 1t tokens') for another"
        )

    def read(self, check: CheckFn) -> Reading:
        reading = self._read(check)
        return reading._replace(observed=tuple(sorted(self.observed)), notes=tuple(dict.fromkeys(reading.notes)))

    def _read(self, check: CheckFn) -> Reading:
        if (embedded := self.embedded()) is not None:
            return embedded
        spans = self.spans()
        slots = self.slots(spans)
        workloads = [s for s in spans if s.role == "workload"]
        family_only = bool(workloads) and (
            not any(t.is_a(MODEL) for s in workloads for t in s.terms)
            or (workloads[0].end < len(self.toks) and bool(_SIZE.match(self.toks[workloads[0].end])))
        )  # 'llama 70b': a family named with a size after it
        named = frozenset(i for s in spans if s.role != "workload" for i in range(s.start, s.end))
        sized = self.sized(named) if (not workloads or family_only) else []
        if family_only and any(found[0] for found in sized) and self._family_note in self.notes:
            self.notes.remove(self._family_note)  # 'llama 70b': the size names the model, not the family's smallest
        if not any(s.role == "precision" for s in spans):
            self._id_format(slots)  # a size's own suffix ('72b-4bit')
        if sized:  # a process alone names no model
            process = next((s.text for s in spans if s.role == "process"), "")
            if (plain := self._generic(sized)) is not None:  # 'a 70b model': a generic dense decoder of that size
                slots["workload"] = f"{plain} {process}".strip()
                self._model_named = True
                return self._reading(slots, check, spans)
            sized = [found for found in sized if found[0]]  # the KB's models of that size
        if (not workloads or family_only) and sized:
            process = next((s.text for s in spans if s.role == "process"), "")
            if len(sized) == 1:  # 'a 72b model', 'Qwen1.5-72B-Chat': the KB's one model of that size, said so
                model, size = sized[0]
                self.notes.append(f"'{size}' read as {model}, the KB's model of that size (not the model named)")
                process = next((s.text for s in spans if s.role == "process"), "")
                slots["workload"] = f"{model} {process}".strip()
                self._model_named = True
            elif (settled := self._settled(sized)) is not None:  # a declared rule picks one: said, the others named
                slots["workload"] = f"{settled} {process}".strip()
                self._model_named = True
            else:  # several models of that size: their readings, not a guess
                readings = []
                process = next((s.text for s in spans if s.role == "process"), "")
                self._model_named = True
                for model, _size in sized[:4]:
                    try:
                        workload = f"{model} {process}".strip()
                        readings.append(self._reading({**slots, "workload": workload}, check, spans).canonical)
                    except QueryError:
                        continue
                if readings:
                    raise AmbiguousSentenceError(
                        f"'{sized[0][1]}' is the size of several models in the KB; ask about one of them",
                        query=self.text,
                        suggestions=readings,
                    )
        return self._reading(slots, check, spans)

    def embedded(self) -> Reading | None:
        """A canonical question inside the sentence ('hi! quick question: gpu for lstm? thanks'):
        up to three words off either end, none of them a name the KB knows, and the language reads the rest."""
        words = self.text.split()
        for dropped in range(0, 7):
            for left in range(0, min(dropped, 3) + 1):
                right = dropped - left
                if right > 3 or left + right >= len(words):
                    continue
                inner = " ".join(words[left : len(words) - right]).strip(_PUNCTUATION)
                if not inner or inner == self.text:
                    continue
                outer = [w.strip(_PUNCTUATION).lower() for w in words[:left] + words[len(words) - right :]]
                if self._names_any(outer) or not all(self._chatty(w) for w in outer) or self.unknown & set(outer):
                    continue  # only words that mean nothing to the language are dropped, never the unknown name
                end = len(words) - right
                edges = [words[max(0, left - 1) : left + 1] if left else [], words[end - 1 : end + 1] if right else []]
                if self._names_any([" ".join(w.strip(_PUNCTUATION).lower() for w in edge) for edge in edges if edge]):
                    continue  # nor the end of a name ('... fit on a 3090 ti': 'ti' is the card's)
                if _form(inner) is not None and _compiles(inner, self.cat, self.run):  # what they wrote: run once, as the answer
                    return Reading(inner, "as written", tuple(self.notes))
        return None

    def _chatty(self, word: str) -> bool:
        """A word the language gives no meaning: not a keyword, key, unit, setting, mode or number."""
        norm = normalise(word)
        return not (
            word in _keywords()
            or norm in self.cat.keys
            or norm in self.cat.units
            or norm in self.cat.settings
            or norm in self.cat.modes
            or any(ch.isdigit() for ch in word)
            or any(ch in word for ch in "=<>")
        )

    def _names_any(self, words: list[str]) -> bool:
        found = self.cat.lookup([w for w in words if w])
        return any(
            t.types & {GPU, GPU_FAMILY, MODEL, FAMILY, APPLICATION, AREA, PROCESS, PRECISION}
            for terms in found.values()
            for t in terms
        )

    def _unplaced_note(self, intent: Intent, template: str, slots: dict[str, str]) -> list[str]:
        if template not in intent.unplaced:
            return self.notes
        if "{rungpu}" in template:
            return [*self.notes, _RUN_NOTE.format(setup=slots["runsetup"])]
        if "{topgpu}" in template:
            return [*self.notes, _TOP_NOTE.format(gpu=slots["topgpu"], workload=slots["workload"])]
        return [
            *self.notes,
            f"no hardware named: read as the GPUs ranked for it ({intent.label}); name a card "
            "('on rtx 4090', 'on 2 x a100') for the figure itself",
        ]

    def _unnamed_note(self, intent: Intent, template: str, slots: dict[str, str]) -> list[str]:
        if template not in intent.unnamed or "{hardware}" not in template:  # the reverse question's note
            return self.notes
        said = [s for s in self._deictic if s]
        stand_in = f" ('{said[0]}' names none)" if said else ""
        return [
            *self.notes,
            f"no model named{stand_in}: read as the reverse question, the models that fit on {slots['hardware']}"
            f"{slots.get('for', '')}; "
            f"name one ('does llama 3 8b fit on {slots['hardware']}') for its own verdict",
        ]

    def _missing_model(self, cued: list[Intent], slots: dict[str, str]) -> str | None:
        """What a sentence lacks when its first intent needs a model it does not name ('how long would
        training this take on a 1080 ti', 'how many a100 to deploy?') and has no no-model reading: unless
        another cued intent reads it ('a100 - rtx 4090 same speed (or slower)': a comparison), it is
        refused with this, saying what is missing and how to ask, not read as the reverse question."""
        if not cued:
            return None
        # the first intent that reads more than a sentence naming no model ('how many cuda cores does the
        # 4090 have': a card's figure, kbq:noModelTemplate only; 'how many 4090s do I need': a model is missing)
        first = _leading(cued) or cued[0]
        if not first.templates:
            return None
        needs = [t for t in first.templates if t not in first.unnamed]
        # 'is 24 gb enough?': the models that fit; with a process named ('can 2 a100 train from scratch?'), only
        # a reverse form that keeps it ('{for}': 'models that fit on 2 x A100 for training'), never dropped
        reverse = (
            bool(first.unnamed)
            and "hardware" in slots
            and not self._model_named
            and ("workload" not in slots or any("{for}" in t for t in first.unnamed))
        )
        if not self._model_named and not reverse and needs and all("{workload}" in t for t in needs):
            what = "model"  # 'how much gpu memory does this model need?': no reading without one
        elif "hardware" not in slots and all("{hardware}" in t for t in first.templates):
            what = "card or memory budget"  # 'what llms can I run?'
        else:
            return None
        asked = ("workload",) if what == "model" else ("hardware",)
        usable = [t for t in needs if all(n in slots or n in asked for n in _SLOT.findall(t))]  # the sentence's own slots
        shown = re.sub(r"\{(at|with|under)\}", "", (usable or first.templates)[0])
        process = f" {slots['workload']}" if what == "model" and "workload" in slots else ""  # a process named alone
        if _form_says(shown, process):
            process = ""  # the form says it already ('time to train MODEL', not 'time to train MODEL training')
        shown = shown.replace("{workload}", f"MODEL{process}") if what == "model" else shown.replace("{hardware}", "HARDWARE")
        shown = _SLOT.sub(lambda m: slots.get(m.group(1), m.group(1).upper()), shown)
        return f"this sentence names no {what}, and a {first.label} question needs one: ask '{shown}'"

    @staticmethod
    def _before_missing(intent: Intent, cued: list[Intent]) -> bool:
        """Whether a no-model template's intent comes before the first intent that needs a model ('how
        many cuda cores does the 3090 have': the card's figure, before 'how many GPU for MODEL')."""
        first = _leading(cued)
        return first is not None and cued.index(intent) < cued.index(first)

    def _with_examples(self, intent: Intent, slots: dict[str, str], check: CheckFn) -> list[str]:
        """The intent's question with each of its example models (kbq:exampleWorkload) and what the
        sentence names, each checked to answer: how to ask it, with a model the KB knows."""
        out: list[str] = []
        process = slots.get("workload", "")  # a process named without a model ('train from scratch'): kept
        for example in intent.examples:
            for template in intent.templates:
                if template in intent.unnamed or (template in intent.unplaced and "hardware" in slots):
                    continue
                said = _form_says(template, process)  # 'time to train'
                filled = self.fill(template, {**slots, "workload": example if said else f"{example} {process}".strip()})
                if filled is not None and filled not in out and check(filled) is None:
                    out.append(filled)
                    break
        return out

    def _refused_names_nothing(self, spans: list[Span]) -> bool:
        """Whether the name the language refused ('this', 'on 24 gb vram', 'local ai') is only words
        that name no model: words the reader read as something else (a card, a budget) or gives no
        name (ignore, deictic, budget words). 'frobnicator' names a model kbq does not know: no reverse."""
        covered = {self.toks[i] for s in spans for i in range(s.start, s.end)}
        return all(
            w in covered or any(self.lex.roles.get(f"{role}:{w}") for role in ("ignore", "deictic", "budget"))
            for w in _tokens(self.unknown_text.lower())
        )

    def _unplaced_name(self, spans: list[Span]) -> str:
        """A word in the sentence that nothing reads, that is no word the reader or the language knows, and
        that stands where a workload does (after a kbq:wordRole 'workload-before' word or before a
        'workload-after' one: 'grpo' in 'can grpo run on single h20'): the name of a model or process kbq
        does not know, which a reverse question would drop. Latin letters only: a name is written so, and a
        Chinese word jieba cuts ('您好') is not one. '' when there is none."""
        covered = {i for s in spans for i in range(s.start, s.end)}
        known = self._known_words()
        for i, word in enumerate(self.toks):
            if i in covered or word in known or not re.search(r"[a-z]", word) or _CJK.search(word):
                continue
            if any(self.lex.roles.get(f"{role}:{word}") for role in ("ignore", "deictic", "budget", "suffix")):
                continue
            before = self.toks[i - 1] if i else ""
            after = self.toks[i + 1] if i + 1 < len(self.toks) else ""
            if self.lex.roles.get(f"workload-before:{before}") or self.lex.roles.get(f"workload-after:{after}"):
                return word  # in a workload's place ('run X', 'for X', 'X run on', 'do X on'), not any word
        return ""

    def _close_names(self, word: str) -> str:
        """The KB's models and processes whose names are close to an unknown word, as the end of a message."""
        close = self.cat.suggest(word, [MODEL, PROCESS], limit=4)
        if close:
            return f"; close names: {', '.join(close)}"
        processes = sorted(str(r[0]) for r in self.run(PREFIXES + "SELECT ?l WHERE { ?p a kbq:Process ; rdfs:label ?l }").rows)
        return f"; the processes kbq sizes: {', '.join(processes)}" if processes else ""

    def _drops_process(self, template: str, slots: dict[str, str]) -> bool:
        """Whether the template would drop the process the sentence names without a model ('the biggest model
        I can fine-tune on a 4090': not 'largest model for GPU', which sizes inference): a named process is
        never left out silently; the reverse form keeps it ('{for}')."""
        return "workload" in slots and not self._model_named and "{workload}" not in template and "{for}" not in template

    def _unplaced_applies(self, slots: dict[str, str]) -> bool:
        """A ranking stands in for a speed or time only for a model, and only when no hardware is named."""
        return "hardware" not in slots and self._model_named

    def unplaced(self, check: CheckFn) -> Reading | None:
        """A speed or time question that names no hardware ('how fast is llama 3 8b', 'time to train
        bert-base'): its intent's ranking (kbq:unplacedTemplate), said so; None when it names hardware."""
        slots = self.slots(self.spans())
        if "workload" not in slots or not self._unplaced_applies(slots):
            return None
        for intent in self.cued():
            for template in intent.templates:
                if template in intent.unplaced and (text := self.fill(template, slots)) is not None and check(text) is None:
                    return Reading(text, intent.label, tuple(self._unplaced_note(intent, template, slots)), template)
        return None

    def _reading(self, slots: dict[str, str], check: CheckFn, spans: list[Span]) -> Reading:
        """The cued intents' templates in priority order; if none answers, every intent's first
        answering template, keeping those that use the most of what the sentence names."""
        tried: list[str] = []
        cued = self.cued()
        missing = self._missing_model(cued, slots)
        first_error: tuple[str, str] | None = None  # the first intent's first reading, and why it does not answer
        for intent in cued:
            for template in intent.templates:
                text = self.fill(template, slots)
                if text is None or text in tried:
                    continue
                if template in intent.unplaced and not self._unplaced_applies(slots):
                    continue
                if self._drops_process(template, slots):
                    continue
                if "{for}" in template and "{workload}" not in template and (unknown := self._unplaced_name(spans)):
                    raise UnanswerableSentenceError(  # 'can grpo run on single h20': never the models that fit
                        f"'{unknown}' is not a model or process kbq knows, so '{text}' would not answer what is asked"
                        + self._close_names(unknown),
                        query=self.text,
                        suggestions=[text],
                    )
                if template in intent.unnamed and (
                    self._model_named
                    or ("workload" in slots and "{for}" not in template)  # a process it would drop
                    or (missing is not None and not self._before_missing(intent, cued))
                    or not self._refused_names_nothing(spans)
                ):
                    continue  # the reverse question only when no model, size or process is named
                tried.append(text)
                error = check(text)
                if error is not None and intent is _leading(cued) and first_error is None:
                    first_error = (text, getattr(error, "message", str(error)))
                if error is None:
                    notes = self._unplaced_note(intent, template, slots)
                    notes = notes if template not in intent.unnamed else self._unnamed_note(intent, template, slots)
                    if intent.note and template in intent.unnamed:  # what the no-model reading answers
                        notes = [*notes, intent.note]
                    if "{topgpu}" in template and template not in intent.unplaced:
                        notes = [*notes, _TOP_NOTE.format(gpu=slots["topgpu"], workload=slots["workload"])]
                    return Reading(text, intent.label, tuple(notes), template, no_model=template in intent.unnamed)
        if missing is not None:
            kind: type[UnanswerableSentenceError] = MissingModelError if "no model" in missing else MissingHardwareError
            needing = _leading(cued) or cued[0]
            shown = self._with_examples(needing, slots, check) if kind is MissingModelError else []
            shown += [q for q in self.nearest(spans, slots, check, tried) if q not in shown]
            raise kind(missing, query=self.text, suggestions=shown[:_READINGS_SHOWN])
        readings: list[Reading] = []
        named = {k for k in ("workload", "hardware", "gpu") if k in slots}
        for intent in self.lex.intents if named else ():  # no cue and nothing named: no reading to offer
            for template in intent.templates:
                text = self.fill(template, slots)
                if text is None or text in tried:
                    continue
                tried.append(text)
                if check(text) is None:
                    readings.append(Reading(text, intent.label, tuple(self.notes), template))
                    break
        if readings:  # the readings that use the most of what the sentence names (and use some of it)
            used = [len(named & set(_SLOT.findall(r.template))) for r in readings]
            readings = [r for r, n in zip(readings, used, strict=True) if n == max(used) and n > 0]
        if len(readings) == 1:
            return readings[0]
        if first_error is not None:  # what the sentence asks, and what it lacks, before other readings
            asked, why = first_error
            raise UnanswerableSentenceError(
                f"read as '{asked}', which kbq cannot answer as asked: {why.splitlines()[-1].removeprefix('error: ')}",
                query=self.text,
                suggestions=[r.canonical for r in readings[:4]] or self.nearest(spans, slots, check, tried),
            )
        if len(readings) > 1:
            raise AmbiguousSentenceError(
                "this sentence has several readings; ask one of them",
                query=self.text,
                suggestions=[r.canonical for r in readings[:_READINGS_SHOWN]],
            )
        raise SentenceError(
            "kbq could not read this as a question" + (f" (it names {_named(spans)})" if spans else ""),
            query=self.text,
            suggestions=self.nearest(spans, slots, check, tried),
        )

    def _generic(self, sized: list[tuple[str, str]]) -> str | None:
        """The generic model a size reads as ('70b' -> '70b dense decoder') when no name before the
        size narrows the KB's models of that size ('a 70b model', '72b的模型', 'mistral 123b' when the
        KB has no Mistral of that size); None when a name narrows them ('llama 70b') or the size is not
        a dense one ('8x7b')."""
        from kbq.lang.workload import generic

        size, narrowed = sized[0][1], self._narrowed
        found = generic.term(self.cat, size)
        declared = generic.profile(self.cat)
        if found is None or declared is None or narrowed or self._mixture:
            return None
        if self._hint:
            self.notes.append(f"'{self._hint} {size}' names no model of the KB: read as a {found.label}")
        return f"{size} {declared.label}"

    def _with_active(self, models: list[str], active: str) -> list[str]:
        """The models among `models` whose active parameters are about the active size named ('a3b'
        after '35b': 3B active, within 15% or half a billion, as names round them: Qwen3.5-35B-A3B has 3.45B)."""
        if not models:
            return []
        size = float(active[1:-1]) * 1e9
        values = " ".join(_literal(m) for m in models)
        rows = self.run(
            PREFIXES + f"SELECT DISTINCT ?l WHERE {{ VALUES ?l {{ {values} }} ?m rdfs:label ?l ; "
            f"kbq:activeParameterCount ?a FILTER(ABS(xsd:double(?a) - {size:.0f}e0) <= {max(size * 0.15, 0.5e9):.0f}e0) }}"
        ).rows
        kept = {str(r[0]) for r in rows}
        return [m for m in models if m in kept]

    def _settled(self, sized: list[tuple[str, str]]) -> str | None:
        """One of several models of the size named, when a declared rule picks it (said in the answer,
        the others named): one whose name every other extends ('Qwen3-30B-A3B' before
        'Qwen3-30B-A3B-Instruct-2507': its fine-tunes of the same size), else the newest generation of
        the line the word before the size names (kbq:ModelLine in kb/sentences.ttl: 'llama 70b' is
        Llama 3.3 70B). None when neither picks one: the readings, not a guess."""
        models = [m for m, _ in sized]
        size = sized[0][1]
        base = [m for m in models if all(normalise(o).startswith(normalise(m)) for o in models)]
        if len(base) != 1:  # every other names it as its base (kbq:baseModel: the same architecture)
            values = " ".join(_literal(m) for m in models)
            rows = self.run(
                PREFIXES + f"SELECT ?b (COUNT(DISTINCT ?o) AS ?n) WHERE {{ VALUES ?l {{ {values} }} VALUES ?b {{ {values} }} "
                "?m rdfs:label ?l ; kbq:baseModel ?bm . ?bm rdfs:label ?b BIND(?l AS ?o) } GROUP BY ?b"
            ).rows
            base = [str(b) for b, n in rows if int(str(n)) == len(models) - 1]
        if len(base) == 1:
            self.notes.append(
                f"'{size}' read as {base[0]}: the KB's other models of that size extend its name or its architecture ("
                f"{', '.join(m for m in models if m != base[0])}); name one to ask about it"
            )
            return _say(base[0], base[0]) or None
        if not self._hint:
            return None
        values = " ".join(_literal(m) for m in models)
        line_word = normalise(re.sub(r"[\d.]+$", "", self._hint))  # 'llama3': the line's word, 'llama'
        rows = self.run(
            PREFIXES
            + f"""SELECT ?l ?line (COUNT(?mid) AS ?pos) WHERE {{
  ?row a kbq:ModelLine ; kbq:lineWord ?word ; rdfs:label ?line ; kbq:generations ?list .
  FILTER(LCASE(STR(?word)) = {_literal(line_word)})
  ?list rdf:rest* ?mid . ?mid rdf:rest* ?node . ?node rdf:first ?member .
  VALUES ?l {{ {values} }} ?m rdfs:label ?l . {{ ?m kbq:variantOf? ?member }} UNION {{ ?member kbq:generationModel ?m }}
}} GROUP BY ?l ?line ?node ORDER BY ?pos ?l"""
        ).rows
        if not rows or (len(rows) > 1 and int(str(rows[0][2])) == int(str(rows[1][2]))):
            return None
        chosen, line = str(rows[0][0]), str(rows[0][1])
        others = [m for m in models if m != chosen]
        self.notes.append(
            f"'{self._hint} {size}' names several models: read as {chosen}, the newest {line} generation of that "
            f"size (kb/sentences.ttl); the others: {', '.join(others[:6])} (name one to ask about it)"
        )
        return _say(chosen, chosen) or None

    def sized(self, named: frozenset[int] = frozenset()) -> list[tuple[str, str]]:
        """A size where a model should be ('72b', 'qwen1.5-72b-chat', 'llama 70b'): the KB's models
        within 5% of it, narrowed to those whose name starts like the word before the size (or the
        size alone, with no models, when the KB has none of it: a generic model can still be read). A word
        the sentence names as something else (`named`: a process, a card) is no model's name."""
        from kbq.lang.words import Words

        self._hint, self._narrowed, self._mixture = "", False, False
        words = Words(self.cat, self.text)
        for i, tok in enumerate(self.toks):
            if i in named and tok in " ".join(s.text for s in self._settings()).split():
                continue  # '100b tokens': a setting's number, not a model's size
            parts = re.split(r"[-_]", tok)
            for k, part in enumerate(parts):
                if not _SIZE.match(part):
                    continue
                models = words.models_of_size(part, limit=_SIZED_KEPT)
                after = parts[k + 1] if k + 1 < len(parts) else (self.toks[i + 1] if i + 1 < len(self.toks) else "")
                self._mixture = bool(_ACTIVE.match(after))  # '30b-a3b': a mixture of experts, no dense decoder
                if self._mixture and (active := self._with_active(models, after)):
                    models, part = active, f"{part}-{after}"  # said as '35b-a3b': the total and active size
                if k + 1 < len(parts) and after in self.lex.formats and self.id_format is None:
                    self.id_format = (after, self.lex.formats[after])  # '72b-4bit': the weights' format
                hint = parts[k - 1] if k > 0 else (self.toks[i - 1] if i > 0 and (i - 1) not in named else "")
                if re.fullmatch(r"\d+(?:\.\d+)?", hint) and k == 0 and i > 1 and re.fullmatch(r"[a-z]+", self.toks[i - 2]):
                    hint = self.toks[i - 2] + hint  # 'llama 3 405b': the line and its generation ('llama3')
                prefix = re.match(r"[a-z][a-z0-9.]*", hint)  # 'qwen1.5' narrows to Qwen1.5 models, not Qwen2.5
                if prefix and len(prefix.group()) > 2 and self.lex.roles.get(hint) != "ignore":
                    narrowed = [m for m in models if normalise(m).startswith(normalise(prefix.group()))]
                    self._hint, self._narrowed = hint, bool(narrowed)
                    models = narrowed or models
                return [(m, part) for m in models] or [("", part)]
        return []

    def nearest(self, spans: list[Span], slots: dict[str, str], check: CheckFn, tried: list[str]) -> list[str]:
        """Canonical questions built from what the sentence names (each uses some of it), each
        checked to answer; none when it names nothing the KB knows."""
        named = {k for k in ("workload", "hardware", "gpu") if k in slots}
        out: list[str] = []
        for intent in self.lex.intents:
            for template in intent.templates:
                if not named & set(_SLOT.findall(template)):
                    continue
                filled = self.fill(template, slots)
                if filled is not None and filled not in out and check(filled) is None:
                    out.append(filled)
                    break
            if len(out) >= 3:
                break
        return out


_ROLES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("gpu", (GPU, GPU_FAMILY)),
    ("workload", (MODEL, FAMILY, APPLICATION, AREA)),
    ("process", (PROCESS,)),
    ("precision", (PRECISION,)),
    ("chassis", (CHASSIS_KIND,)),
)
_ROLE_ORDER = {"gpu": 0, "workload": 1, "budget": 2, "setting": 3, "process": 4, "precision": 5, "mode": 6, "key": 8}


def _form_says(form: str, process: str) -> bool:
    """Whether a question form already says a process by its verb ('time to train MODEL' says
    'training'), so the process is not added after the model again."""
    return bool(process) and re.sub(r"ing$", "", process.split()[-1]) in form.split()


def _cue_at(texts: tuple[str, str], place: tuple[int, int, int]) -> str:
    """The cue found at a place (as the lexicon holds it: words joined by spaces, or Chinese as written)."""
    which, start, end = place
    return texts[which][start:end].strip() if which == 0 else texts[which][start:end]


def _leading(cued: list[Intent]) -> Intent | None:
    """The first cued intent that reads more than a sentence naming no model: an intent with only
    no-model templates (a card's figure) reads a sentence or steps aside, and never decides what a
    sentence lacks or why its reading cannot answer."""
    return next((i for i in cued if any(t not in i.unnamed for t in i.templates)), None)


def _settings_clause(settings: list[str]) -> str:
    if not settings:
        return ""
    parts = [settings[0]] + [" ".join(reversed(s.split(" ", 1))) for s in settings[1:]]  # '32k context batch 4'
    return " with " + " ".join(parts)


def _named(spans: list[Span]) -> str:
    return ", ".join(f"{s.text} ({s.role})" for s in spans[:4])


def read_sentence(text: str, catalog: Catalog, run: Run, check: CheckFn, unknown: str = "") -> Reading:
    """The canonical question a sentence means; AmbiguousSentenceError or SentenceError otherwise."""
    return Reader(text, catalog, run, unknown).read(check)
