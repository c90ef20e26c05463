"""Search quality: recall@1/5/10 and MRR of `search_mem` on question sets with known answers.

    python benchmarks/quality.py [--sets locomo npm-docs ...] [--modes ...] [--json FILE]

Never part of `make test` (`make bench-quality` runs it). Each set is written into a fresh vault
through the service, as `write_mem` writes, embedded, and each question is asked through the
service's search as an assistant would ask it (the question as written, 10 results), in each
mode: keyword, semantic and hybrid, and `reranked` (hybrid with the cross-encoder that
MEMVAULT_RERANK_MODEL names, when it is set; skipped otherwise: see docs/search.md#reranking):

- `locomo`: the LoCoMo dev split in ../shared/data/locomo-dev (see its README): each session of
  the five conversations is one memory in one vault; a question's recall@k is the share of its
  evidence sessions among the first k results. Reported per question category too.
- `npm-docs`: the 83 markdown pages of npm's documentation (from the npm package on the npm
  registry, fetched once into benchmarks/.cache) and our own paraphrased how-do-I questions
  (benchmarks/quality/npm-docs.json, written before any tuning); a question is found at k when
  any of its answer pages is among the first k results.
- `man-pages`: short notes, one per base tool of this Debian machine (its manual page's NAME
  line and the first paragraphs of its DESCRIPTION, read with `man`), and 76 questions in
  everyday words (benchmarks/quality/man-pages.json, written before this set was first
  measured): short notes, a third kind, added to check the fusion chosen on the other two.
- `decisions`: 81 notes of a small fictional team's project (decision records, meeting notes,
  customer calls, incidents, gotchas, how-tos, by six invented writers, with near-duplicate
  topics) and 91 questions asked weeks later in other words, by category `topic` (what the
  answer note is about) and `detail` (a point in the middle of a note about something else)
  (benchmarks/quality/decisions.json, notes and questions written before it was measured).
- `multilingual`: 50 short notes, 25 in German and 25 in Spanish, and 57 questions by
  category: `de` and `es` in the notes' own language, `en-de` and `en-es` in English about
  a German or Spanish note (benchmarks/quality/multilingual.json, written likewise).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tarfile
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import yaml

from memvault.config import Settings
from memvault.core.drafts import Draft, WriteOptions
from memvault.presentation.lines import hit_line, search_heading
from memvault.service.vault import VaultService

HERE = Path(__file__).resolve().parent
CACHE = HERE / ".cache"
LOCOMO = HERE.parent.parent / "shared" / "data" / "locomo-dev"
NPM_VERSION = "10.9.2"
KS = (1, 5, 10)
# How many candidates of each side are kept for replays (hybrid search fuses 50 of each).
CANDIDATES = 50
# How many of each other set's questions are asked of a set's vault as questions nothing there
# answers: what a page holds when nothing matches.
OFFTOPIC = 30
MODES = ("keyword", "semantic", "hybrid")
# Hybrid search with the reranker MEMVAULT_RERANK_MODEL names (only when it is set).
RERANKED = "reranked"
RERANK_MODEL = os.environ.get("MEMVAULT_RERANK_MODEL") or None
LOCOMO_CATEGORIES = {
    1: "multi-hop",
    2: "temporal",
    3: "open-domain",
    4: "single-hop",
    5: "adversarial",
}
_EVIDENCE = re.compile(r"D(\d+):")


@dataclass
class Question:
    """A question as asked, the titles that answer it, and how finding them is counted."""

    text: str
    answers: set[str]
    category: str = "all"
    any_answer: bool = False

    def found(self, titles: list[str], k: int) -> float:
        """The share of answers among the first k titles (1.0 or 0.0 when any answer will do)."""
        got = len(self.answers & {t.lower() for t in titles[:k]})
        if self.any_answer:
            return float(got > 0)
        return got / len(self.answers)

    def reciprocal_rank(self, titles: list[str]) -> float:
        """1 / the rank of the first answer among the results, 0 when none is there."""
        for rank, title in enumerate(titles, 1):
            if title.lower() in self.answers:
                return 1.0 / rank
        return 0.0


@dataclass
class QuestionSet:
    """Notes to write (title, body) and the questions asked of them."""

    name: str
    notes: list[tuple[str, str]]
    questions: list[Question]


@dataclass
class Score:
    """Recall at each k and MRR, summed over questions until `mean` divides them."""

    count: int = 0
    recall: dict[int, float] = field(default_factory=lambda: dict.fromkeys(KS, 0.0))
    mrr: float = 0.0

    def add(self, question: Question, titles: list[str]) -> None:
        self.count += 1
        for k in KS:
            self.recall[k] += question.found(titles, k)
        self.mrr += question.reciprocal_rank(titles)

    def row(self) -> dict[str, float]:
        """The means, rounded for the table and the JSON."""
        n = max(self.count, 1)
        out = {f"recall@{k}": round(self.recall[k] / n, 4) for k in KS}
        return out | {"mrr": round(self.mrr / n, 4), "questions": self.count}


def locomo() -> QuestionSet:
    """The LoCoMo dev split: one memory per session, turns as `- **Speaker:** text` lines."""
    notes: list[tuple[str, str]] = []
    questions: list[Question] = []
    for path in sorted(LOCOMO.glob("*.json")):
        conversation = json.loads(path.read_text())
        number = path.stem
        for key, turns in conversation.items():
            session = re.fullmatch(r"session_(\d+)", key)
            if session is None or not turns:
                continue
            body = "\n".join(f"- **{t['speaker']}:** {t['text']}" for t in turns)
            notes.append((_session_title(number, session.group(1)), body))
        for qa in conversation["qa"]:
            sessions = {
                _session_title(number, s)
                for s in _EVIDENCE.findall(" ".join(qa.get("evidence", [])))
            }
            if sessions:
                category = LOCOMO_CATEGORIES.get(qa["category"], str(qa["category"]))
                questions.append(Question(qa["question"], sessions, category))
    return QuestionSet("locomo", notes, questions)


def _session_title(conversation: str, session: str) -> str:
    return f"conversation {conversation} session {session}".lower()


def npm_docs() -> QuestionSet:
    """npm's documentation pages (title from their frontmatter, description over the body)."""
    spec = json.loads((HERE / "quality" / "npm-docs.json").read_text())
    notes = []
    for page in sorted(_npm_pages().rglob("*.md")):
        _, front, body = page.read_text().split("---\n", 2)
        meta = yaml.safe_load(front)
        notes.append((str(meta["title"]), f"{meta.get('description', '')}\n\n{body.strip()}"))
    questions = [
        Question(q["q"], {a.lower() for a in q["answers"]}, any_answer=True)
        for q in spec["questions"]
    ]
    return QuestionSet("npm-docs", notes, questions)


def _npm_pages() -> Path:
    """npm's docs/content folder, unpacked once from the package on the npm registry."""
    folder = CACHE / f"npm-{NPM_VERSION}"
    pages = folder / "package" / "docs" / "content"
    if not pages.is_dir():
        folder.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            ["npm", "pack", f"npm@{NPM_VERSION}", "--silent"],
            cwd=folder,
            check=True,
            stdout=subprocess.DEVNULL,
        )
        with tarfile.open(folder / f"npm-{NPM_VERSION}.tgz") as archive:
            archive.extractall(folder, filter="data")
    return pages


def man_pages() -> QuestionSet:
    """Each listed tool's manual page as a short note; a tool whose page is missing, or is
    another's (`zcat` is gzip's), is left out, and so are the questions only it answers."""
    spec = json.loads((HERE / "quality" / "man-pages.json").read_text())
    notes: dict[str, tuple[str, str]] = {}
    for command in spec["commands"]:
        note = _man_note(command)
        if note is not None and note not in notes.values():
            notes[command] = note
    missing = sorted(set(spec["commands"]) - set(notes))
    if missing:
        print(f"# man-pages: no page of its own for {', '.join(missing)}", file=sys.stderr)
    questions = [
        Question(q["q"], {a for a in q["answers"] if a in notes}, any_answer=True)
        for q in spec["questions"]
        if any(a in notes for a in q["answers"])
    ]
    return QuestionSet("man-pages", [(c, f"{n}\n\n{d}") for c, (n, d) in notes.items()], questions)


def _man_note(command: str) -> tuple[str, str] | None:
    """(NAME line, the DESCRIPTION's first paragraphs up to about 60 words, options left out,
    cut at 110 words) of a section 1 manual page, or None when there is none."""
    done = subprocess.run(
        ["man", "-P", "cat", "1", command],
        capture_output=True,
        text=True,
        env=os.environ | {"MANWIDTH": "3000"},
        check=False,
    )
    if done.returncode:
        return None
    sections = {}
    for section in re.split(r"\n(?=[A-Z][A-Z ]+\n)", re.sub(r".\x08", "", done.stdout)):
        heading, _, text = section.partition("\n")
        sections[heading.strip()] = text
    kept: list[str] = []
    for paragraph in re.split(r"\n\s*\n", sections.get("DESCRIPTION", "")):
        if paragraph.strip() and not paragraph.strip().startswith("-"):
            kept += paragraph.split()
        if len(kept) > 60:
            break
    return " ".join(sections.get("NAME", "").split()), " ".join(kept[:110])


def written(name: str) -> QuestionSet:
    """A set whose notes and questions are both in benchmarks/quality/<name>.json (notes as
    title and body; each question with its answer titles, any one of which will do, and its
    category)."""
    spec = json.loads((HERE / "quality" / f"{name}.json").read_text())
    notes = [(note["title"], note["body"]) for note in spec["notes"]]
    questions = [
        Question(q["q"], {a.lower() for a in q["answers"]}, q["category"], any_answer=True)
        for q in spec["questions"]
    ]
    return QuestionSet(name, notes, questions)


SETS: dict[str, Callable[[], QuestionSet]] = {
    "locomo": locomo,
    "npm-docs": npm_docs,
    "man-pages": man_pages,
    "decisions": partial(written, "decisions"),
    "multilingual": partial(written, "multilingual"),
}


def measure(
    qs: QuestionSet,
    modes: list[str],
    candidates: Path | None = None,
    offtopic: list[str] | None = None,
) -> Iterator[tuple[str, str, dict[str, float]]]:
    """Write the set's notes into a fresh vault, embed them, ask every question in each mode;
    (mode, category, scores) rows. With `candidates`, each question's keyword and semantic
    candidates (CANDIDATES each, with their scores) go to `candidates/<set>.jsonl`, so that
    a fusion or a cut can be replayed offline in seconds (benchmarks/replay.py), and so do
    those of the `offtopic` questions (other sets', which nothing here answers)."""
    with tempfile.TemporaryDirectory() as tmp:
        vault = VaultService.open(Settings(vault=Path(tmp) / "vault"))
        titles_by_id = {}
        for title, body in qs.notes:
            memory = vault.create(
                Draft(title, body), WriteOptions(allow_duplicate=True, secrets="redact")
            )
            titles_by_id[memory.id] = title.lower()
        if modes != ["keyword"]:
            started = time.perf_counter()
            vault.embed()
            print(
                f"# {qs.name}: embedded in {time.perf_counter() - started:.1f} s", file=sys.stderr
            )
        if candidates is not None:
            asked = [*qs.questions, *(Question(text, set(), "offtopic") for text in offtopic or [])]
            _keep_candidates(vault, asked, titles_by_id, candidates / f"{qs.name}.jsonl")
        for mode in modes:
            scores: dict[str, Score] = defaultdict(Score)
            searcher = _reranking(Path(tmp) / "vault") if mode == RERANKED else vault
            fused = 0
            for question in qs.questions:
                page = searcher.search(
                    question.text, limit=max(KS), mode="hybrid" if mode == RERANKED else mode
                )
                fused += mode == RERANKED and not page.reranked
                titles = [titles_by_id.get(h.id, h.title.lower()) for h in page.results]
                scores["all"].add(question, titles)
                if question.category != "all":
                    scores[question.category].add(question, titles)
            if searcher is not vault:
                searcher.close()
                print(f"# {qs.name}: {fused} searches kept the fused order", file=sys.stderr)
            for category in ["all", *sorted(c for c in scores if c != "all")]:
                yield mode, category, scores[category].row()
        vault.close()


def _reranking(folder: Path) -> VaultService:
    """The vault opened again with the reranker of MEMVAULT_RERANK_MODEL."""
    return VaultService.open(Settings(vault=folder, rerank_model=RERANK_MODEL), fill=False)


def _keep_candidates(
    vault: VaultService, questions: list[Question], titles_by_id: dict[str, str], path: Path
) -> None:
    """Each question's keyword candidates (title, bm25 score, relevance) and semantic ones
    (title, cosine), best first, how many notes each side matched in all, and how many
    characters search_mem's text answer of the default search (10 hits) holds, as JSON lines."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as out:
        for question in questions:
            sides = {}
            for mode in ("keyword", "semantic"):
                page = vault.search(question.text, limit=CANDIDATES, mode=mode, count_use=False)
                hits = [
                    [titles_by_id.get(h.id, h.title.lower()), h.score, h.relevance]
                    for h in page.results
                ]
                sides[mode] = {"hits": hits, "total": page.total}
            shown = vault.search(question.text, limit=10, count_use=False)
            text = [
                search_heading(shown, question.text),
                *(f"- {hit_line(h)}" for h in shown.results),
            ]
            record = {
                "question": question.text,
                "answers": sorted(question.answers),
                "category": question.category,
                "any_answer": question.any_answer,
                "text_chars": len("\n".join(text)),
                "page": len(shown.results),
                **sides,
            }
            out.write(json.dumps(record, ensure_ascii=False) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sets", nargs="+", choices=sorted(SETS), default=sorted(SETS))
    modes = [*MODES, RERANKED]
    default = modes if RERANK_MODEL else list(MODES)
    parser.add_argument("--modes", nargs="+", choices=modes, default=default)
    parser.add_argument("--json", type=Path, help="also write the rows to this file")
    parser.add_argument(
        "--candidates",
        type=Path,
        default=CACHE / "candidates",
        help="where each question's candidates go, one JSON line each (replay.py reads them)",
    )
    args = parser.parse_args()
    if RERANKED in args.modes and not RERANK_MODEL:
        print("# reranked: skipped, MEMVAULT_RERANK_MODEL is not set", file=sys.stderr)
        args.modes.remove(RERANKED)
    rows = []
    print(_line("set", "mode", "category", "n", "R@1", "R@5", "R@10", "MRR"))
    sets = {name: SETS[name]() for name in args.sets}
    for name, qs in sets.items():
        others = [
            q.text for other in sets.values() if other is not qs for q in other.questions[:OFFTOPIC]
        ]
        for mode, category, row in measure(qs, args.modes, args.candidates, others):
            rows.append({"set": name, "mode": mode, "category": category} | row)
            scores = [f"{row[key]:.3f}" for key in ("recall@1", "recall@5", "recall@10", "mrr")]
            print(_line(name, mode, category, str(row["questions"]), *scores))
        sys.stdout.flush()
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2) + "\n")


def _line(name: str, mode: str, category: str, count: str, *scores: str) -> str:
    """One row of the printed table."""
    return f"{name:<12} {mode:<8} {category:<12} {count:>4} " + " ".join(f"{s:>6}" for s in scores)


if __name__ == "__main__":
    main()
