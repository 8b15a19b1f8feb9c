"""The conventions every command follows: its --help ends with an example; the options every
command shares mean the same in each (one spelling per idea); the old spellings are gone."""

from __future__ import annotations

import pytest

from jaxscale.cli import COMMANDS, main

WORD2VEC = ("train", "eval", "neighbours", "scaling")


def _help(capsys, *argv: str) -> str:
    with pytest.raises(SystemExit) as exit_:
        main([*argv, "--help"])
    assert exit_.value.code == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("argv", [(), *((name,) for name in COMMANDS), *(("word2vec", sub) for sub in WORD2VEC)])
def test_every_help_ends_with_an_example(capsys, argv):
    text = _help(capsys, *argv).rstrip()
    example = text.rsplit("\nExample:\n", 1)
    assert len(example) == 2, f"jaxscale {' '.join(argv)} --help has no example"
    assert all(line.startswith("  jaxscale ") for line in example[1].splitlines())


@pytest.mark.parametrize("command", ["fit", "bayes", "sensitivity", "reconcile", "curve"])
def test_the_runs_are_the_positional_argument_and_files_go_to_out(capsys, command):
    text = _help(capsys, command)
    assert "RUNS" in text and "--out DIR" in text and "--where COL=VALUE" in text and "--source KIND" in text


@pytest.mark.parametrize("argv", [
    ["reconcile", "--spec", "epoch"], ["reconcile", "--runs", "x.csv"], ["sensitivity", "--preset", "epoch"],
    ["allocate", "--compute", "1e22", "--unique-tokens", "1e9", "--base", "epoch"],
    ["allocate", "--compute", "1e22", "--unique-tokens", "1e9", "--plot", "a.png"],
    ["curve", "x.csv", "--figure", "a.png"], ["curve", "x.csv", "--preset", "misfitting"],
    ["fit", "x.csv", "--no-figures"], ["fit", "x.csv", "--tied-exponents"],
])
def test_the_old_spellings_are_refused(capsys, argv):
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 2 and "unrecognized arguments" in capsys.readouterr().err
