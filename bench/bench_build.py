"""Snapshot rebuild time: the shipped KB with each engine, and a synthetic KB 100x larger.

Ratios are against the shipped KB's rebuild with the default engine, measured in the same run.
Target: the 100x rebuild under 60 s on this 2-core machine.

Run: python bench/bench_build.py [--factor 100]   (writes bench/results/build.txt)
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from make_synthetic import write
from report import record

from kbq.build import pipeline
from kbq.store import snapshot


def build(folder: Path, *, engine: str = "reasonable", overlays: list[Path] | None = None) -> snapshot.SnapshotInfo:
    path = folder / f"snapshot-{time.perf_counter_ns()}"
    return pipeline.build(path, overlays=overlays or [], engine=engine)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--factor", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        shipped = [build(folder) for _ in range(args.repeat)]
        base = statistics.median(i.build_seconds for i in shipped)
        owlrl = build(folder, engine="owlrl")
        synthetic = folder / f"synthetic-{args.factor}x.nt"
        extra = write(args.factor, synthetic)
        big = build(folder, overlays=[synthetic])
    lines = [
        "kbq snapshot build benchmark (load + SHACL validation + reasoning to fixpoint + consistency checks + write)",
        f"  shipped KB, reasonable: {base:.2f} s median of {args.repeat}"
        f" ({shipped[0].asserted} asserted, {shipped[0].inferred} inferred,"
        f" reasoning {statistics.median(i.reason_seconds for i in shipped):.2f} s)",
        f"  shipped KB, owlrl (reference): {owlrl.build_seconds:.2f} s (reasoning {owlrl.reason_seconds:.2f} s)"
        f" = {owlrl.build_seconds / base:.1f}x the default",
        f"  synthetic {args.factor}x KB, reasonable: {big.build_seconds:.2f} s ({big.asserted} asserted incl. {extra} synthetic,"
        f" {big.inferred} inferred, reasoning {big.reason_seconds:.2f} s) = {big.build_seconds / base:.1f}x the shipped build"
        f" for {big.asserted / shipped[0].asserted:.0f}x the triples   (target < 60 s)",
    ]
    record(lines, "build.txt")


if __name__ == "__main__":
    main()
