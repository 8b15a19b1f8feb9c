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


@pytest.mark.parametrize("argv", [(), *((name,) for name in COMMANDS), *(("word2vec", sub) for sub in WORD2VEC)])
def test_every_help_prints_a_percent_sign_once(capsys, argv):
    """A description is printed as written (argparse formats only the options' help), so a
    doubled percent sign there reached the user as "90%%"."""
    assert "%%" not in _help(capsys, *argv)


@pytest.mark.parametrize("command", ["fit", "bayes", "sensitivity", "reconcile", "curve", "allocate"])
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


@pytest.mark.parametrize("argv,option", [
    (["design", "--budget", "1e22", "--min-cost", "1e22", "--max-cost", "1e21"], "--min-cost 1e+22 must be below --max-cost"),
    (["fit", "EPOCH", "--drop-highest", "1000"], "--drop-highest must be in [0, "),
])
def test_an_error_names_the_option_the_user_typed(capsys, argv, option, tmp_path):
    """Errors spoke the verbs' Python names (``min_cost``, ``drop_highest``) to a user who typed
    ``--min-cost``; the command line writes them as its options."""
    table = tmp_path / "runs.csv"
    table.write_text("N,D,loss\n" + "".join(f"{n:g},{n * r:g},{2 + 400 / n ** 0.34 + 400 / (n * r) ** 0.28}\n"
                                               for n in (1e7, 1e8, 1e9) for r in (5, 20, 80)))
    assert main([str(table) if a == "EPOCH" else a for a in argv]) == 2
    err = capsys.readouterr().err
    assert option in err and "min_cost" not in err and "drop_highest" not in err


def test_allocate_takes_runs_as_every_command_does(tmp_path, capsys):
    """`jaxscale allocate RUNS --compute 1e22` was refused ("unrecognized arguments"): it fits the
    runs' law (js.fit) and allocates it (js.allocate), as the Python verbs do together."""
    import json

    import jaxscale as js

    table = tmp_path / "runs.csv"
    table.write_text("N,D,loss\n" + "".join(f"{n:g},{n * r:g},{1.8 + 480 / n ** 0.34 + 2000 / (n * r) ** 0.37}\n"
                                               for n in (1e7, 3e7, 1e8, 3e8, 1e9) for r in (5, 20, 80)))
    assert main(["allocate", str(table), "--compute", "1e22", "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    expected = js.allocate(js.fit(str(table)), 1e22).to_dict()
    assert printed["N"] == pytest.approx(expected["N"], rel=1e-9) and printed["D"] == pytest.approx(expected["D"], rel=1e-9)
    assert main(["allocate", str(table), "--compute", "1e22", "--published", "epoch"]) == 2
    assert "with RUNS the law is fitted to them" in capsys.readouterr().err


def test_an_undefined_number_is_printed_as_undefined_not_a_traceback(tmp_path, capsys):
    """A fit of runs given twice at each (N, D), 20% apart, printed its result then died on
    ``NoneType.__format__`` (its condition number undefined); so did ``compare --compute 1e300``
    (its multiplier undefined). The text says "undefined" where the JSON has null."""
    n = [n for n in (1e7, 3e7, 1e8, 3e8, 1e9) for _ in range(4)]
    d = [a * r for a in (1e7, 3e7, 1e8, 3e8, 1e9) for r in (5, 20, 80, 320)]
    rows = [(a, b, (1.8 + 480 / a ** 0.34 + 2000 / b ** 0.37) * f) for f in (1.0, 1.2) for a, b in zip(n, d)]
    twice = tmp_path / "twice.csv"
    twice.write_text("N,D,loss\n" + "".join(f"{a:g},{b:g},{c}\n" for a, b, c in rows))
    once = tmp_path / "once.csv"
    once.write_text("N,D,loss\n" + "".join(f"{a:g},{b:g},{c}\n" for a, b, c in rows[:20]))
    for argv in (["fit", str(twice)], ["compare", str(once), str(twice), "--compute", "1e300", "--bootstrap", "20"]):
        assert main(argv) == 0
        out, err = capsys.readouterr()
        assert "Traceback" not in err and "undefined" in out
