"""The runs-table loader: spellings, C = 6ND, and one-line errors for every bad-table kind."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from jaxscale.tables import schema as S
from jaxscale.tables.table import drop_highest_loss, read_runs_table
from tests.conftest import shared_data_file

GOOD = "N,D,loss\n1e8,2e9,3.1\n2e8,4e9,2.9\n4e8,8e9,2.7\n8e8,1.6e10,2.5\n1.6e9,3.2e10,2.4\n3.2e9,6.4e10,2.3\n"


def write(tmp_path, text, name="runs.csv"):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_epoch_file_loads_as_it_is():
    table = read_runs_table(shared_data_file("chinchilla_svg_extracted_data.csv"))
    assert len(table) == 245
    np.testing.assert_allclose(table.c, 6 * table.n * table.d, rtol=1e-12)
    assert table.n.dtype == np.float64
    assert {S.N_TOTAL, S.COMPUTE_TOTAL, S.TOKENS, S.LOSS} <= set(table.frame.columns)


def test_compute_fills_tokens_and_tokens_fill_compute(tmp_path):
    by_d = read_runs_table(write(tmp_path, GOOD))
    text_c = "params,FLOPs,Loss\n" + "\n".join(
        f"{n},{6 * n * d},{l}" for n, d, l in zip(by_d.n, by_d.d, by_d.loss))
    by_c = read_runs_table(write(tmp_path, text_c, "c.csv"))
    np.testing.assert_allclose(by_c.d, by_d.d, rtol=1e-12)
    np.testing.assert_allclose(by_d.c, 6 * by_d.n * by_d.d)


def test_sweep_table_with_canonical_columns_loads_unchanged():
    n = np.array([1e6, 2e6, 4e6, 8e6, 1.6e7, 3.2e7])
    frame = pd.DataFrame({
        S.RUN_ID: [f"r{i}" for i in range(6)], S.STEP: np.arange(6) * 100,
        S.N_TOTAL: n, S.N_NONEMBEDDING: n / 2, S.TOKENS: 20 * n, S.COMPUTE_TOTAL: 120 * n * n,
        S.COMPUTE_NONEMBEDDING: 60 * n * n, S.LOSS: np.linspace(4, 3, 6),
    })
    table = read_runs_table(frame)
    np.testing.assert_array_equal(table.n, n)
    np.testing.assert_array_equal(table.n_nonembedding, n / 2)
    np.testing.assert_array_equal(table.step, np.arange(6) * 100)
    assert list(table.run_id) == [f"r{i}" for i in range(6)]
    assert S.COMPUTE_NONEMBEDDING in table.frame.columns


def test_explicit_column_names(tmp_path):
    text = GOOD.replace("N,D,loss", "size,toks,val")
    table = read_runs_table(write(tmp_path, text), n_col="size", d_col="toks", loss_col="val")
    assert len(table) == 6
    with pytest.raises(ValueError, match="'nope'"):
        read_runs_table(write(tmp_path, text), n_col="nope", d_col="toks", loss_col="val")


BAD_TABLES = {
    "nan": (GOOD.replace("2.7", "nan"), r"row 3 \(line 4\), column 'loss': missing value"),
    "empty cell": (GOOD.replace(",2.7", ","), r"row 3 \(line 4\), column 'loss': missing value"),
    "inf": (GOOD.replace("4e9", "inf"), r"row 2 \(line 3\), column 'D': infinite"),
    "zero": (GOOD.replace("2e8", "0"), r"row 2 \(line 3\), column 'N': must be > 0"),
    "negative": (GOOD.replace("2.4", "-2.4"), r"row 5 \(line 6\), column 'loss': must be > 0"),
    "non-numeric": (GOOD.replace("8e8", "big"), r"row 4 \(line 5\), column 'N': not a number \('big'\)"),
    "missing loss column": (GOOD.replace("N,D,loss", "N,D,xyz"), r"no column for loss"),
    "missing D and C": (GOOD.replace("N,D,loss", "N,q,loss"), r"no column for training tokens D or compute C"),
    "empty file": ("", r"empty file"),
    "header only": ("N,D,loss\n", r"header but no rows"),
    "fewer rows than parameters": ("N,D,loss\n1e8,2e9,3\n2e8,3e9,2.9\n", r"2 rows, fewer than the 5 parameters"),
    "all-equal N": ("N,D,loss\n" + "".join(f"1e8,{d},3\n" for d in (1e9, 2e9, 3e9, 4e9, 5e9)),
                    r"column 'N': all 5 rows have N = 1e\+08"),
    "all-equal D": ("N,D,loss\n" + "".join(f"{n},1e9,3\n" for n in (1e8, 2e8, 3e8, 4e8, 5e8)),
                    r"column 'D': all 5 rows have D = 1e\+09"),
    "duplicate header column": (GOOD.replace("N,D,loss", "N,D,Loss").replace("\n", ",1\n", 1).replace(
        "N,D,Loss,1", "N,D,Loss,loss"), r"duplicate column 'loss' in header \(columns 3 and 4\)"),
    "header repeated inside": (GOOD + "N,D,loss\n", r"row 7 \(line 8\), column 'N': the header is repeated"),
    "thousands separators": (GOOD.replace("1e8,", '"100,000,000",', 1),
                             r"row 1 \(line 2\), column 'N': not a number \('100,000,000'\); write numbers without"),
    "decimal commas": (GOOD.replace(",", ";").replace("3.1", "3,1"),
                       r"row 1 \(line 2\), column 'loss': not a number \('3,1'\); write numbers without"),
}


@pytest.mark.parametrize("delimiter", [",", "\t", ";"])
def test_tab_and_semicolon_separated_tables_load_as_csv_does(tmp_path, delimiter):
    table = read_runs_table(write(tmp_path, GOOD.replace(",", delimiter)))
    expected = read_runs_table(write(tmp_path, GOOD))
    np.testing.assert_array_equal(table.n, expected.n)
    np.testing.assert_array_equal(table.loss, expected.loss)


@pytest.mark.parametrize("kind", sorted(BAD_TABLES))
def test_bad_tables_raise_one_line_naming_row_and_column(tmp_path, kind):
    text, pattern = BAD_TABLES[kind]
    with pytest.raises(ValueError, match=pattern) as err:
        read_runs_table(write(tmp_path, text))
    assert "\n" not in str(err.value)


MISREAD_FILES = {  # what a file is, said as such (it was "empty file", "binary", "duplicate column", ...)
    "blank lines before the header": (("\n\n" + GOOD).encode(), "runs.csv", r"2 blank lines before the header"),
    "UTF-16 with a byte-order mark": (GOOD.encode("utf-16"), "runs.csv", r"UTF-16 text; save the table as UTF-8"),
    "UTF-16 without one": (GOOD.encode("utf-16-le"), "runs.csv", r"UTF-16 text; save the table as UTF-8"),
    "a JSON array": (b'[{"N": 1e8, "D": 2e9, "loss": 3.1}]', "runs.json", r"a JSON document, not a CSV table"),
    "a JSON object over lines": (b'{"N": [1e8, 2e8],\n "D": [2e9, 4e9],\n "loss": [3.1, 2.9]}', "runs.json",
                                 r"a JSON document, not a CSV table"),
}


@pytest.mark.parametrize("kind", sorted(MISREAD_FILES))
def test_a_file_that_is_no_csv_table_is_named_for_what_it_is(tmp_path, kind):
    content, name, pattern = MISREAD_FILES[kind]
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(ValueError, match=pattern):
        read_runs_table(path)


def test_a_directory_without_runs_is_named_a_directory(tmp_path):
    with pytest.raises(ValueError, match=r"a directory with no runs jaxscale reads"):
        read_runs_table(tmp_path)


def test_bad_dataframe_names_row_and_column():
    frame = pd.DataFrame({"n_total": [1e8, 2e8, 3e8, 4e8, 5e8], "tokens": [1e9, 2e9, np.nan, 4e9, 5e9],
                          "loss": [3, 2.9, 2.8, 2.7, 2.6]})
    with pytest.raises(ValueError, match=r"row 3, column 'tokens': missing value"):
        read_runs_table(frame)


def test_missing_file_is_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError):
        read_runs_table(tmp_path / "absent.csv")


def test_drop_highest_loss_keeps_order_and_drops_the_k_worst(tmp_path):
    table = read_runs_table(write(tmp_path, GOOD))
    kept = drop_highest_loss(table, 2)
    np.testing.assert_array_equal(kept.loss, [2.7, 2.5, 2.4, 2.3])
    np.testing.assert_array_equal(kept.n, [4e8, 8e8, 1.6e9, 3.2e9])
    with pytest.raises(ValueError, match="drop_highest"):
        drop_highest_loss(table, 6)


def test_nonembedding_compute_is_six_n_nonembedding_d_unless_given():
    n = np.array([1e6, 2e6, 4e6, 8e6, 1.6e7])
    frame = pd.DataFrame({S.N_TOTAL: n, S.N_NONEMBEDDING: n / 2, S.TOKENS: 20 * n, S.LOSS: np.linspace(4, 3, 5)})
    filled = read_runs_table(frame)
    np.testing.assert_array_equal(filled.c_nonembedding, 6 * (n / 2) * 20 * n)
    np.testing.assert_array_equal(filled.frame[S.COMPUTE_NONEMBEDDING], filled.c_nonembedding)
    given = read_runs_table(frame.assign(**{S.COMPUTE_NONEMBEDDING: 70 * n * n}))
    np.testing.assert_array_equal(given.c_nonembedding, 70 * n * n)
    for basis, expected in (("total", (filled.n, filled.c)), ("nonembedding", (n / 2, filled.c_nonembedding))):
        np.testing.assert_array_equal(filled.on_basis(basis), expected)
    np.testing.assert_array_equal(filled.select([0, 2]).c_nonembedding, filled.c_nonembedding[[0, 2]])
    with pytest.raises(ValueError, match="basis must be one of"):
        filled.on_basis("embedding")
    with pytest.raises(ValueError, match="n_nonembedding"):
        read_runs_table(frame.drop(columns=S.N_NONEMBEDDING)).on_basis("nonembedding")


def test_a_schedule_asks_only_for_what_it_needs_and_names_how_to_give_it():
    """`curve` asked a constant schedule for its final_fraction, "(give it as a default)" with no
    such option named; a constant rate has no final fraction, and a cosine run's missing one is
    asked for as the column or the argument (``--final-fraction`` on the command line)."""
    import numpy as np
    import pandas as pd

    from jaxscale.tables.learning_rates import run_learning_rates
    from jaxscale.tables.table import read_runs_table

    frame = pd.DataFrame({"run_id": "a", "step": np.arange(1, 6) * 10, "N": 1e7, "tokens": np.arange(1, 6) * 1e5,
                          "loss": 3.0, "schedule": "constant", "peak_lr": 1e-3, "total_steps": 50, "warmup_steps": 0})
    rates = run_learning_rates(read_runs_table(frame, sizes_vary=False))["a"]
    assert len(rates) == 50 and np.all(rates == 1e-3)
    with pytest.raises(ValueError, match=r"no 'final_fraction' column .*final_fraction=VALUE"):
        run_learning_rates(read_runs_table(frame.assign(schedule="cosine"), sizes_vary=False))
