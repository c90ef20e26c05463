"""Make a deterministic synthetic vault: N markdown notes with frontmatter, Zipf text and links.

    python benchmarks/gen_vault.py 10000 /tmp/vault --seed 1

The same N and seed always give the same files. Words are drawn from a Zipf-distributed
vocabulary (English function words first, then syllable-made pseudo-words with real English
topic words spread among them), so term frequencies look like real text.
"""

from __future__ import annotations

import argparse
import itertools
import math
import os
import random
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

VOCAB_SIZE = 30_000
ZIPF_EXPONENT = 1.07
MIN_BODY = 200
MAX_BODY = 3_000
MAX_LINKS = 8
DANGLING = 0.06
START = 1_609_459_200  # 2021-01-01T00:00:00Z
SPAN = 4 * 365 * 86_400

FUNCTION_WORDS = """the of and to a in is that for it on with as was be by this are at from or
have an not but we they which you all can has will one there their more when so if about what
into out up then than them some only its also just our after over new""".split()

TOPIC_WORDS = list(
    dict.fromkeys(
        """retry backoff database migration deploy server client cache latency timeout token
schema index query search meeting budget roadmap release incident outage review design payment
invoice customer feature bug fix test benchmark memory vault note link sync config cluster
kubernetes docker python rust golang postgres sqlite redis kafka queue worker thread lock mutex
async event watcher file folder backup restore storage bucket network proxy router gateway auth
password session cookie oauth certificate encryption secret rotation metric dashboard alert
pager oncall runbook postmortem rollback canary flag experiment hypothesis analysis report
quarterly goals hiring interview onboarding team retrospective planning sprint estimate deadline
vendor contract pricing launch marketing campaign mockup prototype feedback user research survey
recipe garden travel flight hotel book chapter author idea draft essay workout running health
doctor appointment family birthday gift invoice tax mortgage insurance budget savings compiler
parser tokenizer grammar protocol transport stream buffer socket packet latency throughput
profiler allocation garbage collector heap stack pointer kernel driver firmware sensor battery
charger camera lens photo album playlist podcast episode lecture course exam thesis paper
citation dataset model training inference embedding vector ranking relevance snippet highlight
frontmatter wikilink backlink heading paragraph markdown editor plugin theme shortcut keyboard
terminal shell script cron scheduler pipeline artifact registry package dependency upgrade
security vulnerability patch audit compliance privacy consent retention archive export import
café résumé naïve façade""".split()
    )
)

CONSONANTS = "b c d f g h j k l m n p r s t v z br cr dr fr gr kl pl st tr sh ch th".split()
VOWELS = "a e i o u ai ea io ou".split()
CODAS = ["", "", "", "n", "r", "s", "l", "m", "x", "nd", "st"]
# YAML 1.1 reads these bare words as booleans or null; keep them out of titles and tags.
YAML_WORDS = {"y", "n", "yes", "no", "on", "off", "true", "false", "null"}

TOP_CATEGORIES = "work personal projects research ops reading journal ideas".split()
FENCE = "```"


@dataclass
class NoteMeta:
    """What other notes need to know about one note before any body is written."""

    title: str
    slug: str
    folder: str
    tags: list[str]
    aliases: list[str] = field(default_factory=list)


def vocabulary(seed: int, size: int = VOCAB_SIZE) -> list[str]:
    """Words by rank, most frequent first: function words, then pseudo and topic words mixed."""
    rng = random.Random(f"vocab-{seed}")
    taken = set(FUNCTION_WORDS) | set(TOPIC_WORDS) | YAML_WORDS
    pseudo: list[str] = []
    while len(pseudo) < size - len(FUNCTION_WORDS) - len(TOPIC_WORDS):
        rank = len(pseudo) + len(FUNCTION_WORDS)
        syllables = 1 + int(math.log10(rank + 1) // 1.5) + rng.randint(0, 1)
        word = "".join(rng.choice(CONSONANTS) + rng.choice(VOWELS) for _ in range(syllables))
        word += rng.choice(CODAS)
        if word not in taken:
            taken.add(word)
            pseudo.append(word)
    slots = sorted(rng.sample(range(30, 8_000), len(TOPIC_WORDS)))
    words = list(pseudo)
    for slot, word in zip(slots, TOPIC_WORDS, strict=True):
        words.insert(slot, word)
    return FUNCTION_WORDS + words


class Writer:
    """Draws words, sentences and markdown blocks for one vault from one seeded generator."""

    def __init__(self, seed: int, n: int):
        self.rng = random.Random(seed)
        self.words = vocabulary(seed)
        ranks = range(1, len(self.words) + 1)
        self.cum = list(itertools.accumulate(1 / r**ZIPF_EXPONENT for r in ranks))
        self.content = [w for w in self.words[len(FUNCTION_WORDS) :] if w not in YAML_WORDS]
        self.tag_pool = self.content[:400]
        self.folders = self._folders(n)

    def draw(self, k: int) -> list[str]:
        """k words from the Zipf distribution."""
        return self.rng.choices(self.words, cum_weights=self.cum, k=k)

    def topic(self, k: int) -> list[str]:
        """k content words (no function words), skewed towards the frequent ones."""
        size = len(self.content)
        return [self.content[int((self.rng.paretovariate(0.6) - 1) * 40) % size] for _ in range(k)]

    def _folders(self, n: int) -> list[str]:
        """Sub-folders two levels deep under the top categories, in a seeded order."""
        subs = max(2, int(math.sqrt(n) / 6))
        folders = []
        for top in TOP_CATEGORIES:
            folders += [f"{top}/{w}" for w in dict.fromkeys(self.topic(subs))]
        self.rng.shuffle(folders)
        return folders

    def meta(self, slugs: set[str]) -> NoteMeta:
        """A new note's title, unique slug, folder, tags and sometimes aliases."""
        title = " ".join(dict.fromkeys(self.topic(self.rng.randint(2, 6)))).capitalize()
        slug = unique_slug(slugify(title), slugs)
        roll = self.rng.random()
        if roll < 0.05:
            folder = ""
        elif roll < 0.15:
            folder = self.rng.choice(TOP_CATEGORIES)
        else:
            folder = self.folders[int(len(self.folders) * self.rng.random() ** 1.5)]
        picks = range(self.rng.randint(0, 5))
        tags = sorted(
            {self.tag_pool[int((self.rng.paretovariate(0.9) - 1) * 8) % 400] for _ in picks}
        )
        aliases = []
        if self.rng.random() < 0.15:
            aliases = [" ".join(self.topic(2)).title() for _ in range(self.rng.randint(1, 2))]
        return NoteMeta(title, slug, folder, tags, aliases)

    def sentence(self) -> str:
        """One sentence of Zipf words."""
        words = self.draw(self.rng.randint(6, 18))
        return " ".join(words).capitalize() + "."

    def paragraph(self) -> str:
        """Two to five sentences."""
        return " ".join(self.sentence() for _ in range(self.rng.randint(2, 5)))

    def heading(self) -> str:
        """A level 2 or 3 heading of topic words."""
        level = "#" * self.rng.choice((2, 2, 2, 3))
        return f"{level} {' '.join(self.topic(self.rng.randint(1, 4))).capitalize()}"

    def bullets(self) -> str:
        """A list: bullets, numbers or task boxes."""
        marks = ("- ", "- ", "* ", "1. ", "- [ ] ", "- [x] ")
        mark = self.rng.choice(marks)
        return "\n".join(
            mark + " ".join(self.draw(self.rng.randint(3, 10)))
            for _ in range(self.rng.randint(2, 6))
        )

    def code(self) -> str:
        """A fenced code block of pseudo-Python."""
        lang = self.rng.choice(("python", "sh", "sql", "json", ""))
        name = "_".join(self.topic(2))
        lines = [f"def {name}(value):"]
        lines += [
            f"    {w} = {name}({w}, {i})" for i, w in enumerate(self.topic(self.rng.randint(1, 6)))
        ]
        return f"{FENCE}{lang}\n" + "\n".join([*lines, "    return value"]) + f"\n{FENCE}"

    def block(self) -> str:
        """One markdown block: mostly paragraphs, then headings, lists and code."""
        roll = self.rng.random()
        if roll < 0.55:
            return self.paragraph()
        if roll < 0.72:
            return self.heading()
        if roll < 0.92:
            return self.bullets()
        return self.code()

    def link(self, metas: list[NoteMeta], me: int) -> str:
        """A wikilink to another note by file stem (some with |alias or #heading), or dangling."""
        if self.rng.random() < DANGLING:
            return f"[[{'-'.join(self.topic(3))}-missing]]"
        other = self.rng.randrange(len(metas))
        if other == me:
            other = (other + 1) % len(metas)
        target = metas[other]
        roll = self.rng.random()
        if roll < 0.2:
            return f"[[{target.slug}|{target.title}]]"
        if roll < 0.35:
            return f"[[{target.slug}#{' '.join(self.topic(2)).capitalize()}]]"
        return f"[[{target.slug}]]"

    def body(self, meta: NoteMeta, links: list[str]) -> str:
        """A markdown body of MIN_BODY..MAX_BODY bytes with the links woven in."""
        target = min(MAX_BODY, max(MIN_BODY, int(self.rng.lognormvariate(math.log(900), 0.7))))
        related = links[: self.rng.randint(0, len(links))] if self.rng.random() < 0.3 else []
        inline = links[len(related) :]
        tail = "".join(f"\n- {link}" for link in related)
        tail = f"\n\n## Related\n{tail}" if related else ""
        blocks = [f"# {meta.title}", self.paragraph()]
        size = sum(len(b.encode()) + 2 for b in [*blocks, tail, *inline]) + 6 * len(inline)
        while size < target:
            block = self.block()
            grown = len(block.encode()) + 2
            if size + grown > MAX_BODY:
                break
            blocks.append(block)
            size += grown
        for link in inline:
            spot = self.rng.choice([i for i, b in enumerate(blocks) if b[0] not in "#`"])
            blocks[spot] += f" See {link}."
        return "\n\n".join(blocks) + tail + "\n"

    def stamps(self) -> tuple[str, str]:
        """created_at and a later updated_at, ISO UTC to the second."""
        created = START + self.rng.randrange(SPAN)
        updated = created + int(self.rng.expovariate(1 / (30 * 86_400)))
        return iso(created), iso(min(updated, START + SPAN))


def iso(seconds: int) -> str:
    """Unix seconds as ISO 8601 UTC, to the second."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))


def slugify(title: str) -> str:
    """The file stem for an ASCII-ish title, as memvault makes it: lower case, dashes."""
    out = "".join(c if c.isalnum() else "-" for c in title.lower())
    return "-".join(part for part in out.split("-") if part)[:80].rstrip("-")


def unique_slug(slug: str, taken: set[str]) -> str:
    """`slug`, or `slug-2`, `slug-3`, ... if a note already has it."""
    candidate, n = slug, 1
    while candidate in taken:
        n += 1
        candidate = f"{slug}-{n}"
    taken.add(candidate)
    return candidate


def frontmatter(meta: NoteMeta, note_id: str, created: str, updated: str) -> str:
    """The YAML block memvault writes, with `aliases` when the note has some."""
    lines = ["---", f"id: {note_id}", f"title: {meta.title}"]
    if meta.folder:
        lines.append(f"category: {meta.folder}")
    lines.append(f"tags: [{', '.join(meta.tags)}]")
    if meta.aliases:
        lines.append(f"aliases: [{', '.join(meta.aliases)}]")
    lines += [f"created_at: {created}", f"updated_at: {updated}", "---", ""]
    return "\n".join(lines)


def generate(n: int, root: Path, seed: int) -> None:
    """Write n notes under `root` (which must be empty or missing)."""
    if root.exists() and any(root.iterdir()):
        raise SystemExit(f"{root} is not empty")
    writer = Writer(seed, n)
    slugs: set[str] = set()
    metas = [writer.meta(slugs) for _ in range(n)]
    for folder in {m.folder for m in metas}:
        (root / folder).mkdir(parents=True, exist_ok=True)
    for i, meta in enumerate(metas):
        note_id = str(uuid.UUID(int=writer.rng.getrandbits(128), version=4))
        links = [writer.link(metas, i) for _ in range(writer.rng.choice((0, 1, 2, 2, 3, 4, 8)))]
        created, updated = writer.stamps()
        text = frontmatter(meta, note_id, created, updated) + writer.body(meta, links)
        path = os.path.join(root, meta.folder, f"{meta.slug}.md")
        with open(path, "w", encoding="utf-8", newline="\n") as out:
            out.write(text)


def main(argv: list[str] | None = None) -> None:
    """CLI: gen_vault.py N DIR --seed S."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("n", type=int, help="number of notes")
    parser.add_argument("dir", type=Path, help="folder to write (created; must be empty)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    started = time.perf_counter()
    generate(args.n, args.dir, args.seed)
    print(
        f"wrote {args.n} notes to {args.dir} in {time.perf_counter() - started:.1f}s",
        file=sys.stderr,
    )


if __name__ == "__main__":
    main()
