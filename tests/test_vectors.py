"""The in-memory chunk vectors and the fusion of two rankings: exact results on small cases."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from memvault.search.fusion import KEPT, TOP, fuse
from memvault.semantic import vectors
from memvault.semantic.vectors import LENGTH_COST, SECOND_SHARE, VectorTable, quantise

# The table holds int8 vectors: on vectors of 2 to 8 values, a cosine comes back to within this.
CLOSE = 0.01


def unit(*values: float) -> np.ndarray:
    vector = np.array(values, dtype=np.float32)
    return vector / np.linalg.norm(vector)


def test_a_note_scores_as_its_best_chunk() -> None:
    table = VectorTable(2)
    table.put(1, np.stack([unit(0, 1), unit(1, 0.1)]))
    table.put(2, np.stack([unit(1, 1)]))
    found = table.nearest(unit(1, 0), 10)
    assert [near.note for near in found] == [1, 2]
    assert found[0].chunk == 1
    assert abs(found[0].score - float(unit(1, 0.1) @ unit(1, 0))) <= CLOSE


def test_within_gives_every_note_that_close_once_best_first() -> None:
    table = VectorTable(2)
    for note in range(40):  # more notes that close than a nearest-few lookup would read
        table.put(note, np.stack([unit(1, note / 100), unit(note / 100, 1)]))
    table.put(99, np.stack([unit(0, 1)]))
    found = table.within(unit(1, 0), 0.9)
    assert [near.note for near in found] == list(range(40))
    assert all(near.chunk == 0 and near.score >= 0.9 for near in found)
    assert table.within(unit(-1, 0), 0.5) == []


def test_within_weighs_each_note_by_its_first_chunk_loaded_put_or_removed() -> None:
    rows = [unit(0, 1), unit(1, 0), unit(1, 0.1), unit(1, 0.2), unit(0, 1), unit(1, 0.05)]
    matrix, scales = quantise(np.stack(rows))
    table = VectorTable(2)
    table.load(np.array([1, 1, 2, 3, 3]), matrix, scales)  # the last row is room
    assert [near.note for near in table.within(unit(1, 0), 0.9)] == [2, 3]
    table.put(4, np.stack([unit(1, 0.05), unit(0, 1)]))
    table.put(1, np.stack([unit(1, 0), unit(0, 1)]))
    table.remove(2)
    assert [near.note for near in table.within(unit(1, 0), 0.9)] == [1, 4, 3]
    assert [near.note for near in table.nearest(unit(1, 0), 3)] == [1, 4, 3]


def test_replaced_and_removed_notes_leave_no_trace_even_after_compaction() -> None:
    table = VectorTable(2)
    for note in range(3000):
        table.put(note, np.stack([unit(1, note)]))
    for note in range(2000):
        table.remove(note)
    table.put(2500, np.stack([unit(1, 0)]))
    assert len(table) == 1000
    found = table.nearest(unit(1, 0), 3)
    assert found[0].note == 2500 and abs(found[0].score - 1.0) <= CLOSE
    assert all(near.note >= 2000 for near in table.nearest(unit(0, 1), 1000))


def test_only_the_notes_a_filter_lets_through() -> None:
    table = VectorTable(2)
    for note in range(10):
        table.put(note, np.stack([unit(1, note / 10)]))
    assert [n.note for n in table.nearest(unit(1, 0), 5, among={7, 3})] == [3, 7]
    assert [n.note for n in table.nearest(unit(1, 0), 3, leaving_out={0, 1})] == [2, 3, 4]
    assert table.nearest(unit(1, 0), 5, among=set()) == []


def test_many_chunks_of_one_note_do_not_hide_the_others() -> None:
    table = VectorTable(2)
    table.put(1, np.stack([unit(1, 0)] * 500))
    table.put(2, np.stack([unit(1, 0.2)]))
    found = table.nearest(unit(1, 0), 2)
    assert {n.note for n in found} == {1, 2}
    # 500 chunks are 500 chances to be close: the note's length costs it (LENGTH_COST).
    assert [n.note for n in found] == [2, 1] and found[1].score > found[0].score


def test_a_note_close_in_two_places_ranks_above_one_close_in_one() -> None:
    """Two notes of as many chunks, the same best cosine: the one whose second chunk is also
    close to the question ranks first (SECOND_SHARE)."""
    table = VectorTable(2)
    table.put(1, np.stack([unit(1, 0.1), unit(-1, 1), unit(0, 1)]))
    table.put(2, np.stack([unit(1, 0.1), unit(1, 0.5), unit(0, 1)]))
    assert [n.note for n in table.nearest(unit(1, 0), 2)] == [2, 1]


def test_fusion_puts_a_note_both_sides_rank_well_first() -> None:
    keyword = [(1, 12.0), (2, 11.5), (3, 2.0), (4, 1.0)]
    semantic = [(5, 0.71), (2, 0.70), (6, 0.30), (1, 0.10)]
    assert [note for note, _ in fuse(keyword, semantic)][:1] == [2]


def test_the_only_note_holding_a_rare_word_stays_on_top() -> None:
    """One full-text hit against fifty semantic neighbours of a word that means nothing."""
    semantic = [(note, 0.30 - note / 1000) for note in range(50)]
    assert fuse([(99, 7.5)], semantic)[0][0] == 99


def test_fusion_follows_a_sides_order_over_its_raw_scores() -> None:
    """Full-text ranks a note holding every word first whatever its bm25: the fusion takes
    that order as the side's verdict (the first note scores as the best after it)."""
    keyword = [(1, 3.6), (2, 5.1), (3, 5.0), (4, 4.8), (5, 1.0)]
    semantic = [(1, 0.52), (2, 0.49), (3, 0.48), (4, 0.44), (6, 0.30)]
    assert [note for note, _ in fuse(keyword, semantic)][:3] == [1, 2, 3]


def test_meaning_sure_of_its_first_note_outweighs_an_unsure_full_text() -> None:
    """Full-text's first four notes are nearly tied (it is unsure), meaning's first leads
    its second by almost two standard deviations: meaning's weight grows and its first
    note goes first, where equal weights put the notes both sides find middling ahead."""
    keyword = [(1, 10.0), (2, 9.95), (3, 9.9), (4, 9.85), (6, 2.0), (7, 1.0)]
    semantic = [(5, 0.80), (1, 0.50), (2, 0.49), (3, 0.48), (4, 0.30), (8, 0.29)]
    assert [note for note, _ in fuse(keyword, semantic, held=0.6)][:2] == [5, 1]
    sure_words = [(1, 10.0), (2, 5.0), (3, 4.9), (4, 4.8), (6, 2.0), (7, 1.0)]
    assert fuse(sure_words, semantic, held=0.6)[0][0] == 1


def test_fusion_of_one_side_keeps_its_order() -> None:
    keyword = [(3, 9.0), (1, 5.0), (2, 5.0)]
    assert [note for note, _ in fuse(keyword, [])] == [3, 1, 2]
    assert [note for note, _ in fuse([], keyword)] == [3, 1, 2]


def test_a_full_text_ranking_on_few_of_the_words_gives_way_to_meaning() -> None:
    """Documentation asked in other words: full-text's first pages hold two of the question's
    seven words, and meaning ranks the first of them 25th; meaning puts the answer (1) first,
    which full-text ranks low. Weighed by the share it holds, full-text gives way."""
    keyword = [(10, 6.5), (11, 4.1), (12, 4.1), (13, 3.5), (14, 2.9), (1, 0.0), (2, 0.0), (3, 0.0)]
    keyword += [(note, 0.0) for note in range(30, 72)]
    semantic = [(1, 0.39), (2, 0.36), (3, 0.34)] + [(n, 0.33 - n / 1000) for n in range(40, 86)]
    semantic.insert(24, (10, 0.3))
    assert fuse(keyword, semantic)[0][0] == 10  # every word held: full-text in full
    assert [note for note, _ in fuse(keyword, semantic, held=2 / 7)][:2] == [1, 2]


def test_a_full_text_hit_holding_the_whole_question_keeps_its_place() -> None:
    """A chat question naming a person and a date no note writes: full-text's first hit holds
    three of its four words, and meaning's first five are near in meaning but never name the
    person. The named note stays first."""
    semantic = [(20, 0.62), (21, 0.55), (22, 0.54), (23, 0.53), (24, 0.52), (1, 0.50)]
    semantic += [(note, 0.45 - note / 1000) for note in range(40, 84)]
    keyword = [(1, 9.0), (2, 8.8), (3, 8.6), (4, 8.4)]
    keyword += [(note, 8.0 - note / 100) for note in range(90, 135)]
    keyword.insert(24, (20, 6.9))
    assert fuse(keyword, semantic, held=3 / 4)[0][0] == 1


@given(
    st.lists(st.tuples(st.integers(0, 30), st.floats(-50, 50)), unique_by=lambda x: x[0]),
    st.lists(st.tuples(st.integers(0, 30), st.floats(-1, 1)), unique_by=lambda x: x[0]),
)
def test_fusion_ranks_every_note_of_either_side_once(
    keyword: list[tuple[int, float]], semantic: list[tuple[int, float]]
) -> None:
    keyword.sort(key=lambda x: -x[1])
    semantic.sort(key=lambda x: -x[1])
    fused = fuse(keyword, semantic)
    assert sorted(note for note, _ in fused) == sorted({n for n, _ in keyword + semantic})
    kept = {n for n, _ in keyword[: KEPT[0]]} | {n for n, _ in semantic[: KEPT[1]]}
    head = [note for note, _ in fused[:TOP]]
    assert kept <= set(head)
    in_order = [fused[:TOP], fused[TOP:], [item for item in fused if item[0] in kept]]
    in_order.append([item for item in fused[:TOP] if item[0] not in kept])
    for run in in_order:
        assert all(a[1] >= b[1] for a, b in itertools.pairwise(run))


def test_each_sides_first_note_stays_on_the_first_page_top() -> None:
    """Meaning alone finds the answer (7) first, the words theirs (1): both sides find 2-6
    middling, and their sum would push 7 down to sixth and 1 to seventh."""
    keyword = [(1, 9.0), (2, 8.0), (3, 7.9), (4, 7.8), (5, 7.7), (6, 7.6)]
    keyword += [(n, 1.0) for n in range(20, 60)]
    semantic = [(7, 0.60), (2, 0.50), (3, 0.50), (4, 0.49), (5, 0.49), (6, 0.48)]
    semantic += [(n, 0.2) for n in range(60, 100)]
    fused = [note for note, _ in fuse(keyword, semantic, held=0.6)]
    assert {1, 7} <= set(fused[:TOP])
    assert fused[:TOP] == [2, 3, 4, 7, 1]


def test_related_notes_score_by_the_cosine_of_their_mean_vectors() -> None:
    table = VectorTable(2)
    table.put(1, np.stack([unit(1, 0), unit(1, 1)]))
    table.put(2, np.stack([unit(1, 0.2)]))
    table.put(3, np.stack([unit(0, 1), unit(-1, 1)]))
    table.put(9, np.stack([unit(1, 0)]))
    table.remove(9)
    found = table.related(1, 10, None, ())
    assert found is not None and [near.note for near in found] == [2, 3]
    mean = unit(*(unit(1, 0) + unit(1, 1)))
    other = unit(*(unit(0, 1) + unit(-1, 1)))
    assert abs(found[1].score - float(mean @ other)) <= CLOSE
    assert [near.note for near in table.related(1, 10, {3}, ()) or []] == [3]
    assert [near.note for near in table.related(1, 10, None, {2}) or []] == [3]
    assert table.related(9, 10, None, ()) is None


def note_score(cosines: np.ndarray) -> float:
    """A note's score as a whole, computed in full from its chunks' cosines."""
    ordered = sorted(cosines.tolist(), reverse=True)
    second = ordered[1] if len(ordered) > 1 else ordered[0]
    share = (1 - SECOND_SHARE) * ordered[0] + SECOND_SHARE * second
    return share - LENGTH_COST * math.log(len(ordered))


def random_table(
    seed: int, notes: int, split: bool = False
) -> tuple[VectorTable, dict[int, np.ndarray]]:
    """A table of `notes` notes of 1-4 random unit chunk vectors each, and those vectors."""
    rng = np.random.default_rng(seed)
    chunks = {}
    table = VectorTable(8, split)
    for note in range(1, notes + 1):
        vectors = rng.normal(size=(int(rng.integers(1, 5)), 8)).astype(np.float32)
        chunks[note] = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
        table.put(note, chunks[note])
    return table, chunks


@given(st.integers(0, 2**32 - 1), st.sets(st.integers(1, 60)), st.integers(1, 12))
def test_a_filtered_search_ranks_as_the_full_product_restricted_to_its_notes(
    seed: int, among: set[int], limit: int
) -> None:
    """Few notes let through: only their rows are multiplied; many: the whole matrix. Either
    way the notes, their best chunks and their cosines are those of the exact product, to
    within int8's error: a note found in place of another is as close to the query."""
    table, chunks = random_table(seed, 60)
    query = unit(*np.random.default_rng(seed + 1).normal(size=8))
    best = {note: chunks[note] @ query for note in among}
    whole = {note: note_score(cosines) for note, cosines in best.items()}
    expected = sorted(whole, key=lambda note: -whole[note])[:limit]
    found = table.nearest(query, limit, among=among)
    assert len(found) == len(expected) and {near.note for near in found} <= among
    for near, wanted in zip(found, expected, strict=True):
        cosines = best[near.note]
        assert abs(whole[near.note] - whole[wanted]) <= 2 * CLOSE
        assert abs(near.rank - whole[near.note]) <= 2 * CLOSE
        assert cosines[near.chunk] >= cosines.max() - 2 * CLOSE
        assert abs(near.score - cosines[near.chunk]) <= CLOSE
    left = set(range(1, 61)) - among
    assert table.nearest(query, limit, leaving_out=left) == found


@pytest.mark.parametrize("seed", range(5))
def test_within_over_a_product_cut_in_halves_finds_what_the_whole_product_finds(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`within` multiplies a big table of first chunks in two halves at once: every note as
    close, in the same order, with the same cosines, as one product of the whole table."""
    table, chunks = random_table(seed, 60, split=True)
    query = unit(*np.random.default_rng(seed + 1).normal(size=8))
    whole = table.within(query, 0.3)
    monkeypatch.setattr(vectors, "SPLIT_ROWS", 7)
    halves = table.within(query, 0.3)
    assert halves == whole
    exact = {note: float(first[0] @ query) for note, first in chunks.items()}
    found = {near.note for near in halves}
    assert {note for note, cosine in exact.items() if cosine >= 0.3 + CLOSE} <= found
    assert all(exact[note] >= 0.3 - CLOSE for note in found)


def test_a_table_loaded_at_once_answers_as_one_filled_note_by_note() -> None:
    """A server's start loads every vector in one matrix (with room to spare): the same
    nearest notes, the same related ones, and a note added after it goes into the room."""
    filled, chunks = random_table(7, 50)
    notes = np.concatenate([np.full(len(v), note) for note, v in chunks.items()])
    matrix = np.zeros((len(notes) + 10, 8), dtype=np.float32)
    matrix[: len(notes)] = np.concatenate(list(chunks.values()))
    loaded = VectorTable(8)
    loaded.load(notes.astype(np.int64), *quantise(matrix))
    query = unit(*np.random.default_rng(8).normal(size=8))
    assert len(loaded) == len(filled) == 50
    assert loaded.nearest(query, 10) == filled.nearest(query, 10)
    assert loaded.nearest(query, 5, among={3, 9, 27}) == filled.nearest(query, 5, among={3, 9, 27})
    related, expected = loaded.related(4, 10, None, ()), filled.related(4, 10, None, ())
    assert related is not None and expected is not None
    assert [near.note for near in related] == [near.note for near in expected]
    assert np.allclose([near.score for near in related], [near.score for near in expected])
    loaded.put(51, np.stack([query]))
    loaded.remove(2)
    found = loaded.nearest(query, 50)
    assert found[0].note == 51 and 2 not in {near.note for near in found}
