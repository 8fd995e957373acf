"""Deck building: the 1.0/1.2 draft, the 1.5 constructed pool, shuffling and ids.

Everything here draws from ``java.util.Random`` in the official order
(``locm-randomness.md`` §5, §7, §8), so the same seeds give the same choices
and the same decks as the official referees.
"""

from __future__ import annotations

from collections.abc import Sequence

from .cards import (
    CARD_LIST,
    CARDS_BY_ID,
    CARDS_IN_CONSTRUCTED,
    Card,
    DoubleStreams,
    draft_pool_cards,
    generate_cards,
    java_double_streams,
)
from .javarandom import JavaRandom
from .params import GameParameters
from .rules import DECK_SIZE, ruleset

DRAFT_POOL_SIZE = 60
MAX_COPIES = 2
"""1.5: a player may choose each card of the constructed pool at most twice."""

DraftTriple = tuple[Card, Card, Card]


def draft_triples(params: GameParameters, league: int = 4) -> tuple[DraftTriple, ...]:
    """The 30 draft triples of a 1.0/1.2 game (``league`` only matters in 1.0)."""
    if params.predefined_draft_ids is not None:
        return tuple(
            (CARDS_BY_ID[a], CARDS_BY_ID[b], CARDS_BY_ID[c])
            for a, b, c in params.predefined_draft_ids
        )
    allowed = draft_pool_cards(ruleset(params.version).draft_league(league))
    rng = JavaRandom(params.seeds["draftChoicesSeed"])
    next_int = rng.next_int
    size = min(DRAFT_POOL_SIZE, len(allowed))
    pool: list[int] = []
    seen: set[int] = set()
    while len(pool) < size:
        index = next_int(len(allowed))
        if index not in seen:
            seen.add(index)
            pool.append(index)
    triples = []
    for _ in range(DECK_SIZE):
        first = pool[next_int(size)]
        second = pool[next_int(size)]
        while second == first:
            second = pool[next_int(size)]
        third = pool[next_int(size)]
        while third in (first, second):
            third = pool[next_int(size)]
        triples.append((allowed[first], allowed[second], allowed[third]))
    return tuple(triples)


def draft_pool_distinct_count(
    triples: Sequence[DraftTriple], params: GameParameters, league: int
) -> int:
    """N of the 'show draft' frames: the distinct cards the draft could offer."""
    if params.predefined_draft_ids is not None:
        return len({card.base_id for triple in triples for card in triple})
    return min(DRAFT_POOL_SIZE, len(draft_pool_cards(ruleset(params.version).draft_league(league))))


def constructed_pool(
    params: GameParameters, streams: DoubleStreams = java_double_streams
) -> tuple[Card, ...]:
    """The cards offered in the 1.5 constructed turn, in the order they are listed.

    ``streams`` draws the card generator's random numbers (see ``generate_cards``).
    """
    if params.predefined_constructed_ids is not None:
        # Offered as listed, unsorted (the official referee's intent for this parameter).
        if params.predefined_card_list_file is None:
            generated = generate_cards(params.seeds["cardGenSeed"], streams=streams)
            cardset = {card.base_id: card for card in generated}
        else:
            cardset = CARDS_BY_ID
        return tuple(cardset[card_id] for card_id in params.predefined_constructed_ids)
    if params.predefined_card_list_file is None:
        # The official referee then draws ~500 numbers from constructedChoicesSeed to
        # pick 120 of the 120 cards and sorts them back: no observable effect, skipped.
        return generate_cards(params.seeds["cardGenSeed"], streams=streams)
    allowed = CARD_LIST
    rng = JavaRandom(params.seeds["constructedChoicesSeed"])
    size = min(CARDS_IN_CONSTRUCTED, len(allowed))
    picked: list[int] = []
    while len(picked) < size:
        index = rng.next_int(len(allowed))
        if index not in picked:
            picked.append(index)
    return tuple(sorted((allowed[i] for i in picked), key=lambda card: (card.cost, card.base_id)))


def shuffled_deck(cards: Sequence[Card], player: int, params: GameParameters) -> list[Card]:
    """A player's chosen cards shuffled with its own shuffle seed (index 0 = top)."""
    deck = list(cards)
    JavaRandom(params.seeds[f"shufflePlayer{player}Seed"]).shuffle(deck)
    return deck
