"""The cases of ``hyperlab.testing.StoreContract`` about experiments' names: a unique name is
held by one experiment, whichever of several racing creators wins, and a claim recorded under
one is defined later by a compare-and-swap."""

from __future__ import annotations

import dataclasses
import threading

import pytest

from hyperlab.errors import (
    ConfigError,
    ExperimentBusy,
    ExperimentNotFound,
    NameTaken,
    StoreError,
)
from hyperlab.store import Store
from hyperlab.testing._store_cases import NO_SECOND_READER, record

__all__ = ["NameCases"]

CREATORS = 4
"""Stores racing to create experiments of one unique name."""


class NameCases:
    """A unique name is held once, against any number of racing creators; plain names may
    repeat; a claim is defined once."""

    def test_a_unique_name_is_held_by_one_experiment(self, store: Store, other: Store) -> None:
        first = record("study001", name="shared", unique_name=True)
        store.create_experiment(first)
        store.create_experiment(record("plain001", name="shared"))  # plain names may repeat
        with pytest.raises(NameTaken, match="'shared' is held by experiment study001") as info:
            other.create_experiment(record("study002", name="shared", unique_name=True))
        assert (info.value.name, info.value.experiment_id) == ("shared", "study001")
        assert sorted(other.ids_named("shared")) == ["plain001", "study001"]  # none written
        assert other.get_experiment("study001") == first
        assert not other.get_experiment("plain001").unique_name
        store.create_experiment(record("study003", name="other", unique_name=True))

    def test_a_unique_name_is_free_again_once_its_experiment_is_deleted(self, store: Store) -> None:
        store.create_experiment(record("study001", name="shared", unique_name=True))
        store.delete_experiment("study001")
        store.create_experiment(record("study002", name="shared", unique_name=True))
        assert store.ids_named("shared") == ["study002"]

    def test_a_renamed_experiment_lets_its_unique_name_go(self, store: Store) -> None:
        store.create_experiment(record("study001", name="shared", unique_name=True))
        store.update_experiment("study001", name="renamed")
        store.flush()
        assert not store.get_experiment("study001").unique_name
        store.create_experiment(record("study002", name="shared", unique_name=True))
        store.create_experiment(record("study003", name="renamed", unique_name=True))

    def test_a_taken_id_is_still_reported_as_the_id(self, store: Store) -> None:
        store.create_experiment(record("study001", name="a", unique_name=True))
        with pytest.raises(StoreError, match="'study001' already exists") as info:
            store.create_experiment(record("study001", name="b", unique_name=True))
        assert not isinstance(info.value, NameTaken)
        assert store.ids_named("b") == []

    def test_a_unique_name_fits_in_any_backends_index(self, store: Store) -> None:
        longest = "\U0001d518" * 512  # four bytes each in UTF-8
        store.create_experiment(record("study001", name=longest, unique_name=True))
        assert store.get_experiment("study001").name == longest
        for bad, said in ((longest + "x", "513 characters"), ("", "0 characters"), (None, "None")):
            with pytest.raises(ConfigError, match=f"name: .*1 to 512 characters, got {said}"):
                store.create_experiment(record("study002", name=bad, unique_name=True))
        assert [e.id for e in store.list_experiments()] == ["study001"]

    def test_racing_creators_of_one_unique_name_end_on_one_experiment(
        self, store: Store, other: Store, storage: str
    ) -> None:
        if other is store:
            pytest.skip(NO_SECOND_READER)
        stores = [Store.open(storage) for _ in range(CREATORS)]
        start = threading.Barrier(CREATORS)
        outcomes: dict[int, str] = {}

        def create(index: int) -> None:
            start.wait()
            try:
                stores[index].create_experiment(
                    record(f"racer{index:03d}", name="shared", unique_name=True)
                )
                outcomes[index] = f"racer{index:03d}"
            except NameTaken as exc:
                outcomes[index] = exc.experiment_id

        threads = [threading.Thread(target=create, args=(i,)) for i in range(CREATORS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        for opened in stores:
            opened.close()
        (winner,) = other.ids_named("shared")
        assert outcomes == {index: winner for index in range(CREATORS)}

    # ---- a claim, defined later ------------------------------------------------------------

    def test_a_claim_is_defined_once(self, store: Store, other: Store) -> None:
        claim = record("study001", name="shared", unique_name=True, created_at=100.0)
        store.create_experiment(claim)
        definition = record(
            "study001",
            name="shared",
            objective=b"\x80objective",
            objective_ref="train:objective",
            tuner=b"\x80tuner",
            seed=7,
            created_at=200.0,
        )
        other.define_experiment(definition, claim)
        defined = store.get_experiment("study001")
        assert defined == dataclasses.replace(definition, unique_name=True)  # still held
        with pytest.raises(ExperimentBusy, match=r"study001 .* was defined or started"):
            store.define_experiment(definition, claim)  # the claim as read is gone
        assert store.get_experiment("study001") == defined
        with pytest.raises(ConfigError, match="must keep the claim's id 'study001'"):
            store.define_experiment(dataclasses.replace(definition, name="other"), defined)
        with pytest.raises(ExperimentNotFound, match="nope1234"):
            store.define_experiment(record("nope1234"), record("nope1234"))

    def test_a_started_claim_is_not_defined_again(self, store: Store) -> None:
        claim = record("study001", name="shared", unique_name=True)
        store.create_experiment(claim)
        store.update_experiment("study001", started_at=5.0)
        store.flush()
        with pytest.raises(ExperimentBusy, match="defined or started"):
            store.define_experiment(dataclasses.replace(claim, seed=7), claim)
        assert store.get_experiment("study001").seed == claim.seed
