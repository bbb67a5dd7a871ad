"""Seeded choices of the export builders. Pure module, no Django imports.

Every choice draws from its own `random.Random` seeded with the export seed and a name for the choice, so one
choice does not shift when another changes (adding a type does not reshuffle the others).
"""

from __future__ import annotations

import random
from collections.abc import Hashable, Mapping, Sequence


def rng_for(seed: int, *names: object) -> random.Random:
    return random.Random(":".join([str(seed), *map(str, names)]))


def choose_balanced(
    candidates: Mapping[str, Sequence[Hashable]], groups: Sequence[str], per_group: int, seed: int
) -> tuple[dict[str, list], dict[str, dict[str, int]]]:
    """K candidates per group, drawn with the seed; returns ({group: chosen in candidate order}, shortfalls).

    A group with fewer than K candidates gives all it has and appears in the shortfalls as
    {"requested": K, "available": n, "selected": n}: nothing is padded.
    """
    chosen: dict[str, list] = {}
    shortfalls: dict[str, dict[str, int]] = {}
    for group in groups:
        pool = list(candidates.get(group, ()))
        if len(pool) <= per_group:
            picked = pool
        else:
            keep = set(rng_for(seed, "group", group).sample(range(len(pool)), per_group))
            picked = [candidate for index, candidate in enumerate(pool) if index in keep]
        chosen[group] = picked
        if len(pool) < per_group:
            shortfalls[group] = {"requested": per_group, "available": len(pool), "selected": len(picked)}
    return chosen, shortfalls


def pick_one(options: Sequence[Hashable], seed: int, *names: object):
    """One of `options` (given in a stable order), drawn with the seed and the names of this choice."""
    if not options:
        raise ValueError("nothing to choose from")
    return options[rng_for(seed, *names).randrange(len(options))]


def choose_models(problems_per_model: Mapping[str, int], count: int, explicit: Sequence[str] | None) -> list[str]:
    """The author models of a mu-MATH bundle: the explicit list, else the `count` models that answered the most
    problems (ties by name)."""
    if explicit:
        return list(dict.fromkeys(explicit))
    ranked = sorted(problems_per_model.items(), key=lambda item: (-item[1], item[0]))
    return [model for model, _ in ranked[:count]]


def choose_subset(items: Sequence[Hashable], count: int | None, seed: int, name: str) -> list:
    """`count` of `items` drawn with the seed, kept in their given order; all of them when count is None."""
    if count is None or count >= len(items):
        return list(items)
    keep = set(rng_for(seed, name).sample(range(len(items)), count))
    return [item for index, item in enumerate(items) if index in keep]
