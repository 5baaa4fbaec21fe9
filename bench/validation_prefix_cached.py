"""Fill the ``prefix_cached_requests`` column of validation rows from their source's stated procedure.

A row's run found some of its prompts already in the server's prefix cache when the source's procedure makes that
so: one server deployed once, a benchmark client that samples its prompts with a fixed seed run several times in
turn on it, and a warm-up request that sends the run's first prompt. The rule reads only a row's configuration
(source, model, hardware, engine, lengths, concurrency, request count), never a measured value, so it fills open and
sealed files alike:

* the runs of one scenario (the same section of the source page, model, hardware and engine) ran in the order
  the page lists them (its subsection numbers, in the row's ``source`` column);
* a seeded client sends the same prompts in the same order each run (the first k prompts of a run of P >= k are the
  k prompts of a run of k), so a run finds the prompts of every earlier run of its scenario cached: its first
  max(earlier runs' request counts) requests, capped at its own count;
* the client's warm-up sends the run's first prompt before the measured requests, so at least 1 is cached.

    python bench/validation_prefix_cached.py [--check] [FILE.csv ...]   (default: every inference CSV shipped)

Sources whose procedure is stated (PROCEDURES):

* SGLang cookbook, Llama 3.1 (sgl-project/sgl-cookbook@7b5bd9c, docs/autoregressive/Llama/Llama3.1.md, 5.1 Speed
  Benchmark): one deployment command (5.1.1, ``sglang serve --model-path Meta-Llama/Llama-3.1-70B --tp 8``, none
  repeated in 5.1.2), then sglang.bench_serving ``--dataset-name random`` at ``--max-concurrency`` 1, 16, 100 (5.1.1.1
  to 5.1.1.3; 10, 80, 500 prompts) and 1, 16, 64 (5.1.2.1 to 5.1.2.3; 10, 80, 320 prompts), no ``--seed`` given.
  sglang 0.5.6's bench_serving.py (the page's release; PyPI wheel): ``--seed`` defaults to 1 and seeds ``random`` and
  ``numpy.random`` before sampling; ``sample_random_requests`` draws the lengths with ``np.random.randint(...,
  size=num_prompts)`` (the legacy generator, whose first k draws do not depend on the size), shuffles ShareGPT with
  ``random.shuffle`` and tiles prompt i to length i; ``--warmup-requests`` defaults to 1 and sends
  ``input_requests[0]``; the radix cache is on (``ServerArgs.disable_radix_cache = False``, page size 1) and keeps
  each finished request's prompt and output (``RadixCache.cache_finished_req``). The 1000/1000 scenario's prompts
  are prefixes of the 8000/1000 one's of the same index (the same ShareGPT prompt tiled), which would give the later
  scenario's prompts a partly cached prefix (about min(L1000, L8000) tokens); a whole-prompt count does not state
  that, and it is left out.
* SGLang cookbook, B200 pages (same commit, section 5.1 of each; the same client and defaults, SGLang 0.5.6 and
  0.5.6.post1): Qwen3.md (Qwen3-235B-A22B-Instruct-2507) numbers its runs 5.1.x.y as the Llama page and deploys
  again before 5.1.2; GPT-OSS.md deploys before each of its two sections, one run each (the warm-up's prompt only);
  DeepSeek-R1.md deploys once (5.1.4) and lists three scenarios of three runs, whose rows name them "Scenario s (...)
  run r". Its scenarios 1 (1,000/1,000) and 2 (1,000/8,000) sample the same prompts (same seed, same
  ``--random-input-len``; the output lengths are drawn after the input lengths), so scenario 2's runs find every
  prompt of scenario 1's largest run cached (``shared_prompts``); scenario 3's 8,000-token prompts only share a
  prefix with them, left out as above.
"""

from __future__ import annotations

import argparse
import csv
import io
import re
import sys
from dataclasses import dataclass
from pathlib import Path

DATA = Path(__file__).resolve().parents[1] / "src" / "aiinfra" / "validation" / "data"
COLUMN = "prefix_cached_requests"
#: the configuration columns that, with the page's section, make two rows the same scenario; the rule reads these,
#: ``id``, ``source``, ``mode`` and ``num_requests``, never ``value`` nor the run's measured token means
SCENARIO = ("source_url", "model_name", "accelerator", "num_accelerators", "tp", "engine", "engine_version")


Place = tuple[int, int]
"""A run's place in its page's order: (its scenario's place among scenarios sharing prompts, its run number)."""


@dataclass(frozen=True, slots=True)
class SeededRunsInTurn:
    """A source page whose scenarios each ran a seeded benchmark client at ascending concurrency on one server."""

    source_url: str
    section: re.Pattern[str]
    """Reads (the scenario's section, the run's place in it) from a row's ``source`` column."""
    warmup_prompts: int
    """Prompts of the run the client's warm-up sends before it (sglang.bench_serving: input_requests[0])."""
    shared_prompts: tuple[str, ...] = ()
    """Scenarios, in the page's order, that ran on one deployment with the same prompts: their runs count as one
    scenario's, the later scenario's after the earlier's."""

    def run_of(self, row: dict[str, str]) -> tuple[tuple[str, ...], Place] | None:
        """(the scenario, the run's place in the page's order) of a concurrency row stating its request count."""
        m = self.section.search(row["source"])
        if m is None or row["mode"] != "concurrency" or not row["num_requests"]:
            return None
        scenario, run = m.group(1), int(m.group(2))
        place = (0, run)
        if scenario in self.shared_prompts:
            place = (self.shared_prompts.index(scenario), run)
            scenario = self.shared_prompts[0]
        return (*(row.get(c, "") for c in SCENARIO), scenario), place


PROCEDURES = (
    SeededRunsInTurn(
        source_url=(
            "https://github.com/sgl-project/sgl-cookbook/blob/7b5bd9c05e3d86da5161ac2be9b91c19a34bf49d/"
            "docs/autoregressive/Llama/Llama3.1.md"
        ),
        section=re.compile(r"\b(5\.1\.\d+)\.(\d+)\s*$"),  # 5.1.1.1 to 5.1.1.3, 5.1.2.1 to 5.1.2.3
        warmup_prompts=1,
    ),
    SeededRunsInTurn(
        source_url=(
            "https://github.com/sgl-project/sgl-cookbook/blob/7b5bd9c05e3d86da5161ac2be9b91c19a34bf49d/"
            "docs/autoregressive/Qwen/Qwen3.md"
        ),
        section=re.compile(r"\b(5\.1\.\d+)\.(\d+)\s*$"),  # 5.1.1.1 to 5.1.3.3
        warmup_prompts=1,
    ),
    SeededRunsInTurn(
        source_url=(
            "https://github.com/sgl-project/sgl-cookbook/blob/7b5bd9c05e3d86da5161ac2be9b91c19a34bf49d/"
            "docs/autoregressive/OpenAI/GPT-OSS.md"
        ),
        section=re.compile(r"\b(5\.1\.\d+) run (\d+)\s*$"),  # 5.1.1 and 5.1.2, one run each
        warmup_prompts=1,
    ),
    SeededRunsInTurn(
        source_url=(
            "https://github.com/sgl-project/sgl-cookbook/blob/7b5bd9c05e3d86da5161ac2be9b91c19a34bf49d/"
            "docs/autoregressive/DeepSeek/DeepSeek-R1.md"
        ),
        section=re.compile(r"\bScenario (\d+) \(.*\) run (\d+)\s*$"),  # scenarios 1 to 3, runs 1 to 3
        warmup_prompts=1,
        shared_prompts=("1", "2"),
    ),
)


def _read(path: Path) -> tuple[list[str], list[str], list[dict[str, str]], str]:
    text = path.read_bytes().decode("utf-8")
    lines = text.splitlines(keepends=True)
    comments = [ln for ln in lines if ln.startswith("#")]
    body = "".join(ln for ln in lines if not ln.startswith("#"))
    reader = csv.DictReader(io.StringIO(body, newline=""))
    ending = "\r\n" if len(lines) > len(comments) and lines[len(comments)].endswith("\r\n") else "\n"
    return comments, list(reader.fieldnames or []), list(reader), ending


def _runs(files: list[Path]) -> dict[tuple[str, ...], dict[Place, int]]:
    """Place in the page's order → request count of every run of each scenario of a stated procedure, over all
    ``files`` (a scenario's runs may be split between an open and a sealed file)."""
    runs: dict[tuple[str, ...], dict[Place, int]] = {}
    by_url = {p.source_url: p for p in PROCEDURES}
    for path in files:
        _, header, rows, _ = _read(path)
        if COLUMN not in header:
            continue
        for row in rows:
            proc = by_url.get(row["source_url"])
            run = None if proc is None else proc.run_of(row)
            if run is not None:
                runs.setdefault(run[0], {})[run[1]] = int(row["num_requests"])
    return runs


def cached_requests(place: Place, runs: dict[Place, int], warmup_prompts: int) -> int:
    """The requests of the run at ``place`` in its page's order whose prompt the server held when it started:
    every earlier run's prompts, and the warm-up's, capped at the run's own count."""
    earlier = [n for p, n in runs.items() if p < place]
    return min(runs[place], max([warmup_prompts, *earlier]))


def filled(path: Path, runs: dict[tuple[str, ...], dict[Place, int]]) -> tuple[str, list[tuple[str, int]]]:
    """The file's text with the column filled for the rows of a stated procedure, and (row id, count) of each."""
    comments, header, rows, ending = _read(path)
    by_url = {p.source_url: p for p in PROCEDURES}
    done = []
    for row in rows:
        proc = by_url.get(row["source_url"])
        run = None if proc is None else proc.run_of(row)
        if proc is None or run is None:
            continue
        n = cached_requests(run[1], runs[run[0]], proc.warmup_prompts)
        row[COLUMN] = str(n)
        done.append((row["id"], n))
    out = io.StringIO(newline="")
    writer = csv.DictWriter(out, fieldnames=header, lineterminator=ending)
    writer.writeheader()
    writer.writerows(rows)
    return "".join(comments) + out.getvalue(), done


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", type=Path, help="inference validation CSVs (default: every one shipped)")
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 if a file would change")
    args = parser.parse_args(argv)
    files = args.files or sorted(p for p in DATA.glob("inference*.csv") if COLUMN in _read(p)[1])
    runs = _runs(files)
    changed = []
    for path in files:
        if COLUMN not in _read(path)[1]:
            continue
        new, done = filled(path, runs)
        for rid, n in done:
            print(f"{path.name}: {rid}: {n}")
        if new != path.read_bytes().decode("utf-8"):
            changed.append(path)
            if not args.check:
                path.write_bytes(new.encode("utf-8"))
    for path in changed:
        print(f"{path}: {'would change' if args.check else 'filled'}")
    return 1 if args.check and changed else 0


if __name__ == "__main__":
    sys.exit(main())
