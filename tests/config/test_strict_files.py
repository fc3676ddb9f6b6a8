"""Every YAML and JSON file a user gives hyperlab is read strictly: a key given twice is refused
(naming the key and both lines), aliases and nesting are bounded (an alias bomb is a
ConfigError at once, never a MemoryError), and a file over 4 MiB is refused before it is read.
Each entry point is tried: config files, search-space files (YAML and NNI's JSON), NNI's
experiment config, and the JSON files of ``hyperlab add-trial`` and ``import``."""

from __future__ import annotations

import contextlib
import json
import os
import re
import threading
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hyperlab import SearchSpace
from hyperlab._files import (
    MAX_ALIAS_VALUES,
    MAX_DEPTH,
    MAX_FILE_BYTES,
    parse_json,
    parse_yaml,
    read_yaml,
)
from hyperlab.cli import main
from hyperlab.compat.nni.experiment import ExperimentConfig as NniConfig
from hyperlab.config import load_config
from hyperlab.errors import ConfigError, SearchSpaceError
from tests.allocations import peak_allocation

SPACE = {"x": {"_type": "uniform", "_value": [0, 1]}}


# ---- documents with a key given twice, at any depth ------------------------------------------
# A mapping is a list of (key, value) pairs here, so that a key can be given twice; the writers
# below put one key per line and note the lines each key of each mapping is on.

# the writers quote strings as JSON does, which YAML reads too, but for characters beyond
# U+FFFF (JSON's surrogate pairs are not YAML's)
CHARACTERS = st.characters(codec="utf-8", max_codepoint=0xFFFF)
KEYS = st.text(CHARACTERS, min_size=1, max_size=8)
SCALARS = st.none() | st.booleans() | st.integers(-(10**6), 10**6) | st.text(CHARACTERS, max_size=8)
DOCUMENTS = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(KEYS, inner, max_size=4),
    max_leaves=25,
)


class Pairs(list):
    """A mapping as its pairs, in order (keys may repeat)."""


def as_pairs(value: Any) -> Any:
    if isinstance(value, dict):
        return Pairs((key, as_pairs(item)) for key, item in value.items())
    if isinstance(value, list):
        return [as_pairs(item) for item in value]
    return value


def mappings(value: Any) -> list[Pairs]:
    """Every mapping in ``value`` with at least one key, outermost first."""
    found = []
    if isinstance(value, Pairs):
        found += [value] if value else []
        for _, item in value:
            found += mappings(item)
    elif isinstance(value, list):
        for item in value:
            found += mappings(item)
    return found


def write_yaml(value: Any, lines: list[str], where: dict, indent: int = 0) -> None:
    """Block YAML, keys double-quoted, one per line; ``where[(id(mapping), key)]`` lists the
    1-based lines the key is on."""
    pad = " " * indent
    if isinstance(value, Pairs):
        for key, item in value:
            where.setdefault((id(value), key), []).append(len(lines) + 1)
            if (isinstance(item, (list, Pairs))) and item:
                lines.append(f"{pad}{json.dumps(key)}:")
                write_yaml(item, lines, where, indent + 2)
            else:
                lines.append(f"{pad}{json.dumps(key)}: {scalar(item)}")
    else:
        for item in value:
            if isinstance(item, (list, Pairs)) and item:
                lines.append(f"{pad}-")
                write_yaml(item, lines, where, indent + 2)
            else:
                lines.append(f"{pad}- {scalar(item)}")


def write_json(value: Any, lines: list[str], where: dict, indent: int = 0) -> None:
    """JSON, one key or item per line; ``where`` as for write_yaml. The caller opens and
    closes ``value`` itself."""
    pad = " " * (indent + 2)
    items = list(value) if isinstance(value, Pairs) else [(None, item) for item in value]
    for number, (key, item) in enumerate(items):
        comma = "," if number < len(items) - 1 else ""
        label = "" if key is None else f"{json.dumps(key)}: "
        if key is not None:
            where.setdefault((id(value), key), []).append(len(lines) + 1)
        if isinstance(item, (list, Pairs)) and item:
            brackets = "{}" if isinstance(item, Pairs) else "[]"
            lines.append(f"{pad}{label}{brackets[0]}")
            write_json(item, lines, where, indent + 2)
            lines.append(f"{pad}{brackets[1]}{comma}")
        else:
            lines.append(f"{pad}{label}{scalar(item)}{comma}")


def scalar(value: Any) -> str:
    if isinstance(value, Pairs):
        return "{}"
    return json.dumps(value)


def document(value: Any, language: str) -> tuple[str, dict]:
    lines: list[str] = []
    where: dict = {}
    if language == "yaml":
        write_yaml(value, lines, where)
    else:
        lines.append("{")
        write_json(value, lines, where)
        lines.append("}")
    return "\n".join(lines) + "\n", where


PARSERS = {"yaml": parse_yaml, "json": parse_json}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    value=st.dictionaries(KEYS, DOCUMENTS, min_size=1, max_size=4),
    language=st.sampled_from(["yaml", "json"]),
    data=st.data(),
)
def test_a_key_given_twice_at_any_depth_is_refused_naming_it_and_both_lines(value, language, data):
    pairs = as_pairs(value)
    text, _ = document(pairs, language)
    assert PARSERS[language](text, "doc") == value  # without a duplicate: read as written

    mapping = data.draw(st.sampled_from(mappings(pairs)), label="mapping")
    first = data.draw(st.integers(0, len(mapping) - 1), label="first")
    key = mapping[first][0]
    again = data.draw(st.integers(first + 1, len(mapping)), label="again")
    mapping.insert(again, (key, data.draw(DOCUMENTS.map(as_pairs), label="value")))
    text, where = document(pairs, language)
    with pytest.raises(ConfigError) as refused:
        PARSERS[language](text, "doc")
    lines = where[(id(mapping), key)]
    assert str(refused.value).startswith(f"doc: key {key!r} is given twice")
    assert f"at line {lines[0]} and line {lines[1]}" in str(refused.value)


def test_a_duplicate_on_one_line_is_named_by_its_columns():
    with pytest.raises(ConfigError, match=r"key 'c' is given twice, on line 2 \(columns 7 and 13"):
        parse_yaml("a:\n  b: {c: 1, c: 2}\n", "doc")
    with pytest.raises(ConfigError, match=r"key 'c' is given twice in one object, on line 1 \("):
        parse_json('{"x": [{"c": 1, "c": 2}]}', "doc")


def test_merge_keys_may_be_overridden_and_anchors_reused():
    text = "base: &base {x: 1, y: [1, 2]}\nfirst:\n  <<: *base\n  x: 3\nsecond: *base\n"
    assert parse_yaml(text, "doc") == {
        "base": {"x": 1, "y": [1, 2]},
        "first": {"x": 3, "y": [1, 2]},
        "second": {"x": 1, "y": [1, 2]},
    }


# ---- each entry point: the key given twice -------------------------------------------------


@pytest.fixture
def project(tmp_path):
    (tmp_path / "space.json").write_text(json.dumps(SPACE))
    return tmp_path


def test_a_config_file_giving_search_space_twice_is_refused(project):
    path = project / "config.yml"
    path.write_text(
        "search_space: space.json\ntrial:\n  command: python t.py\nsearch_space: other.json\n"
    )
    with pytest.raises(
        ConfigError, match=r"config.yml: key 'search_space' is given twice, at line 1 and line 4"
    ):
        load_config(path)


def test_an_nni_config_file_giving_a_field_twice_is_refused(project):
    path = project / "nni.yml"
    path.write_text(
        "searchSpaceFile: space.json\ntrialCommand: python3 t.py\ntrialCodeDirectory: .\n"
        "tuner:\n  name: TPE\n  classArgs:\n"
        "    optimize_mode: maximize\n    optimize_mode: minimize\n"
        "trainingService:\n  platform: local\n"
    )
    message = r"nni.yml: key 'optimize_mode' is given twice, at line 7 and line 8"
    with pytest.raises(ConfigError, match=message):
        NniConfig.load(path)
    with pytest.raises(ConfigError, match=message):
        load_config(path)  # hyperlab reads NNI's files too


@pytest.mark.parametrize("name", ["space.json", "space.yml"])
def test_a_search_space_file_with_a_nested_key_twice_is_refused(tmp_path, name):
    nested = (
        '{"model": {"_type": "choice", "_value": [\n'
        '  {"_name": "cnn", "kernel": {"_type": "randint", "_value": [1, 8]},\n'
        '   "kernel": {"_type": "randint", "_value": [1, 3]}}\n'
        "]}}\n"
    )
    path = tmp_path / name
    path.write_text(nested)  # JSON is YAML too
    with pytest.raises(
        SearchSpaceError, match=rf"{name}: key 'kernel' is given twice.* line 2 and line 3"
    ):
        SearchSpace.from_nni(path)
    with pytest.raises(
        SearchSpaceError, match=r"search-space JSON text: key 'kernel' is given twice"
    ):
        SearchSpace.from_nni(nested)


def test_the_cli_s_json_files_with_a_key_twice_are_refused(tmp_path, capsys):
    params = tmp_path / "params.json"
    params.write_text('{"x": 0.1,\n "x": 0.2}')
    results = tmp_path / "results.json"
    results.write_text('[{"params": {"x": 0.1}, "value": 1.0,\n  "value": 2.0}]')
    for argv, file, line in (
        (["add-trial", "someid", f"@{params}"], params, 2),
        (["import", "someid", str(results)], results, 2),
        (["add-trial", "someid", '{"x": 1, "x": 2}'], "params", 1),
    ):
        assert main(argv) == 2
        error = capsys.readouterr().err
        assert f"{file}: key " in error and "is given twice" in error, error
        assert f"line {line}" in error, error


# ---- aliases and nesting -------------------------------------------------------------------


def alias_bomb() -> str:
    """The "billion laughs" as one YAML flow mapping: nine lists of nine aliases of the list
    before, the last one standing for 9**9 strings."""
    lists = ['&a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    lists += [f"&a{n} [" + ", ".join([f"*a{n - 1}"] * 9) + "]" for n in range(1, 9)]
    return "{" + ", ".join(f"l{n}: {item}" for n, item in enumerate(lists)) + "}"


BOMBS = {  # each where its reader takes any value, as the did
    "config": (load_config, "search_space: space.json\ntrial: {command: x}\ntuner_args: BOMB\n"),
    "space": (SearchSpace.from_nni, "x: {_type: choice, _value: [BOMB]}\n"),
    "nni": (
        NniConfig.load,
        "searchSpaceFile: space.json\ntrialCommand: python3 t.py\ntrialCodeDirectory: .\n"
        "tuner: {name: TPE, classArgs: BOMB}\ntrainingService: {platform: local}\n",
    ),
}


@pytest.mark.parametrize("reader", list(BOMBS))
def test_an_alias_bomb_is_a_config_error_at_once(project, reader):
    read, text = BOMBS[reader]
    path = project / "bomb.yml"
    path.write_text(text.replace("BOMB", alias_bomb()))
    assert len(path.read_bytes()) < 700  # the was 560 bytes
    message = rf"bomb.yml: aliases stand for more than {MAX_ALIAS_VALUES:,} values in all"
    with peak_allocation() as peak, pytest.raises(ConfigError, match=message):
        read(path)
    # the 9**9 strings the bomb stands for would take gigabytes: none of them was built
    assert peak.bytes < 16_000_000, f"refusing the bomb held {peak.bytes:,} bytes at once"


def test_aliases_may_repeat_up_to_the_limit(tmp_path):
    items = ", ".join(str(n) for n in range(999))  # the list and its 1,000 values
    text = f"a: &a [{items}]\n" + "".join(f"b{n}: *a\n" for n in range(MAX_ALIAS_VALUES // 1000))
    assert len(parse_yaml(text, "doc")) == 1 + MAX_ALIAS_VALUES // 1000
    with pytest.raises(ConfigError, match=r"reached at alias \*a at line 102; write"):
        parse_yaml(text + "one_more: *a\n", "doc")


def test_an_alias_inside_its_own_anchor_is_refused():
    with pytest.raises(ConfigError, match=r"alias \*a at line 1 is inside its own anchor &a"):
        parse_yaml("a: &a [1, *a]\n", "doc")


@pytest.mark.parametrize("language", ["yaml", "json"])
def test_nesting_is_bounded_and_never_crashes(language):
    deep = "[" * 100_000 + "]" * 100_000  # libyaml's own composer crashes the process on it
    with pytest.raises(ConfigError, match=rf"doc: nested more than {MAX_DEPTH} levels deep"):
        PARSERS[language](deep, "doc")
    limit = "[" * MAX_DEPTH + "]" * MAX_DEPTH
    assert PARSERS[language](limit, "doc") is not None
    with pytest.raises(ConfigError, match="nested more than"):
        PARSERS[language]("[" + limit + "]", "doc")


def test_aliases_cannot_nest_deeper_than_the_limit():
    inner = "[" * (MAX_DEPTH - 1) + "]" * (MAX_DEPTH - 1)
    assert parse_yaml(f"a: &a {inner}\n", "doc")
    with pytest.raises(ConfigError, match=r"alias \*a at line 2 makes it nested more than"):
        parse_yaml(f"a: &a {inner}\nb: [*a]\n", "doc")


# ---- the size limit ------------------------------------------------------------------------


def test_a_file_over_the_limit_is_refused_before_it_is_read(tmp_path):
    huge = tmp_path / "space.json"
    with open(huge, "wb") as file:  # the 52 MB search space, as a sparse file
        file.truncate(52 * 1024 * 1024)
    with (
        peak_allocation() as peak,
        pytest.raises(
            SearchSpaceError,
            match=r"space.json: the search-space file has 54,525,952 bytes; hyperlab reads files "
            r"of at most 4,194,304 bytes \(4 MiB\)",
        ),
    ):
        SearchSpace.from_nni(huge)
    assert peak.bytes < 1_000_000, f"refusing the file held {peak.bytes:,} bytes: it was read"


def test_the_limit_is_exact(tmp_path):
    path = tmp_path / "config.yml"
    body = "name: padded\n"
    path.write_text(body + "#" * (MAX_FILE_BYTES - len(body) - 1) + "\n")
    assert read_yaml(path, what="config file") == {"name": "padded"}
    path.write_text(body + "#" * (MAX_FILE_BYTES - len(body)) + "\n")
    with pytest.raises(ConfigError, match=r"config.yml: the config file has 4,194,305 bytes"):
        load_config(path)


def test_a_pipe_is_read_up_to_the_limit(tmp_path):
    fifo = tmp_path / "config.yml"
    os.mkfifo(fifo)

    def feed() -> None:
        with open(fifo, "wb") as writer, contextlib.suppress(BrokenPipeError):
            writer.write(b"#" * (MAX_FILE_BYTES + 10))  # the reader may stop at the limit

    writer = threading.Thread(target=feed)
    writer.start()
    with pytest.raises(ConfigError, match=r"has more than 4,194,304 bytes"):
        load_config(fifo)
    writer.join(10)


def test_file_errors_name_the_file(tmp_path):
    with pytest.raises(
        ConfigError, match=re.escape(f"{tmp_path / 'nope.yml'}: config file not found")
    ):
        load_config(tmp_path / "nope.yml")
    latin = tmp_path / "latin.yml"
    latin.write_bytes("name: caf\xe9\n".encode("latin-1"))
    with pytest.raises(ConfigError, match=r"latin.yml: the config file is not UTF-8 text \(byte 9"):
        load_config(latin)
    with pytest.raises(ConfigError, match=r"cannot read the config file: Is a directory"):
        load_config(tmp_path)


def test_a_byte_order_mark_is_allowed(tmp_path):
    path: Path = tmp_path / "space.json"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(SPACE).encode())
    assert SearchSpace.from_nni(path).names == ("x",)
