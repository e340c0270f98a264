"""YAML files (configs and rule presets): every bad file is one ValueError naming it."""

import re

import pytest

from concentration_env import Rules
from concentration_env.game import rules
from concentration_env.game.rules import load_yaml_mapping, resolve_rules


def write(folder, name, content):
    path = folder / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    return path


@pytest.mark.parametrize(
    "content, message",
    [
        (b"packs: 2\nname: caf\xe9\n", "not UTF-8 text"),
        ("a: " + "[" * 5000 + "]" * 5000 + "\n", "nested too deeply"),
        ("packs: 1\nranks: 3\npacks: 2\n", "duplicate key 'packs'"),
        ("outer:\n  x: 1\n  x: 2\n", "duplicate key 'x'"),
        ("- packs\n", "expected a mapping"),
    ],
)
def test_a_bad_file_is_one_error_naming_it(tmp_path, content, message):
    path = write(tmp_path, "config.yaml", content)
    with pytest.raises(ValueError, match=rf"^{path}: .*{message}"):
        load_yaml_mapping(path)


def test_merge_keys_may_still_be_overridden(tmp_path):
    path = write(tmp_path, "config.yaml", "base: &base {packs: 1, ranks: 3}\ngame:\n  <<: *base\n  packs: 2\n")
    assert load_yaml_mapping(path)["game"] == {"packs": 2, "ranks": 3}


def test_an_empty_file_is_an_empty_mapping_only_where_allowed(tmp_path):
    path = write(tmp_path, "config.yaml", "# nothing\n")
    assert load_yaml_mapping(path) == {}
    with pytest.raises(ValueError, match=rf"^{path}: empty"):
        load_yaml_mapping(path, allow_empty=False)


def test_an_empty_preset_is_refused_not_the_standard_game(tmp_path, monkeypatch):
    monkeypatch.setattr(rules, "PRESET_DIR", tmp_path)
    write(tmp_path, "blank.yaml", "")
    write(tmp_path, "plain.yaml", "{}\n")
    with pytest.raises(ValueError, match=r"blank\.yaml: empty"):
        Rules.from_preset("blank")
    assert Rules.from_preset("plain") == Rules()


@pytest.mark.parametrize("name", ["../x", "../presets/standard", "presets/../standard", "Standard", "standard "])
def test_a_preset_is_only_a_name_from_the_preset_folder(tmp_path, monkeypatch, name):
    folder = tmp_path / "presets"
    folder.mkdir()
    monkeypatch.setattr(rules, "PRESET_DIR", folder)
    write(folder, "standard.yaml", "{}\n")
    write(tmp_path, "x.yaml", "packs: 2\nmatching: identical\n")  # a YAML file outside the folder
    with pytest.raises(ValueError, match=rf"unknown preset {re.escape(repr(name))}; allowed: standard$"):
        resolve_rules(name)
