"""``jaxscale reconcile`` as a user runs it: a fresh process, JSON on stdout, figures on disk."""

import json
import subprocess
import sys

import pytest

from jaxscale.cli import main

REQUIRED_KEYS = {
    "spec", "gamma", "delta", "aspect_ratio", "exponent_total", "exponent_total_analytic",
    "exponent_nonembedding", "exponent_nonembedding_analytic", "limit_small", "limit_large",
    "max_abs_error_autodiff_vs_eq17",
}


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "jaxscale", *args], capture_output=True, text=True, timeout=300)


def test_reconcile_json_in_fresh_process(tmp_path):
    proc = run_cli("reconcile", "--published", "epoch", "--json", "--out", str(tmp_path / "figs"))
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert REQUIRED_KEYS <= out.keys()
    assert out["exponent_nonembedding"] == pytest.approx(0.78, abs=0.01)
    assert out["max_abs_error_autodiff_vs_eq17"] <= 1e-8
    assert len(out["files"]) == 4
    for path in out["files"]:
        with open(path, "rb") as f:
            assert f.read(8) == b"\x89PNG\r\n\x1a\n"


def test_reconcile_table_output(capsys):
    assert main(["reconcile", "--published", "chinchilla", "--no-figures"]) == 0
    text = capsys.readouterr().out
    assert "chinchilla parameters" in text and "0.74" in text


@pytest.mark.parametrize(
    "args",
    [["reconcile", "--published", "gpt4"], ["reconcile", "--spec", "epoch"], ["reconcile", "--bogus"], ["nonsense"], []],
)
def test_bad_options_exit_2_with_one_line(args):
    proc = run_cli(*args)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert len(proc.stderr.strip().splitlines()) == 1
    assert "error" in proc.stderr and "Traceback" not in proc.stderr


def test_out_path_that_is_a_file_exits_2(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    assert main(["reconcile", "--out", str(blocker)]) == 2
    assert "not a directory" in capsys.readouterr().err


def test_log_tick_labels_are_plain_powers_of_ten():
    from jaxscale.plots.log_ticks import power_of_ten_label

    assert [power_of_ten_label(v) for v in (1e12, 1e-3, 1.0, 10.0)] == ["10¹²", "10⁻³", "10⁰", "10¹"]
    assert power_of_ten_label(2e12) == "" and power_of_ten_label(0.0) == ""


def test_short_log_axes_label_minor_ticks_at_2_3_5():
    from jaxscale.plots.log_ticks import minor_label

    assert [minor_label(v, 1.2) for v in (2.0, 30.0, 0.5, 5e-4, 2e6)] == ["2", "30", "0.5", "5×10⁻⁴", "2×10⁶"]
    assert minor_label(4.0, 1.2) == "" and minor_label(7e3, 1.2) == ""  # other mantissas stay unlabelled
    assert minor_label(2.0, 3.0) == ""  # three decades in view: powers of ten suffice


def test_training_curve_loss_axis_reads_values_between_powers_of_ten():
    """Figure 3's loss axis spans ~2-25: plain minor labels 2, 3, 5, 20 appear beside 10¹."""
    from jaxscale.plots.reconcile import training_curves_figure
    from jaxscale.reconciliation.pipeline import reconcile_spec

    fig = training_curves_figure(reconcile_spec("epoch"))
    fig.canvas.draw()
    axis = fig.axes[0].yaxis
    labels = {t.get_text() for t in axis.get_majorticklabels() + axis.get_minorticklabels() if t.get_visible()}
    assert {"2", "3", "5", "10¹", "20"} <= labels


def test_fixed_margins_place_the_axes_in_inches():
    from matplotlib.figure import Figure

    from jaxscale.plots.margins import fixed_margins

    fig = Figure(figsize=(10, 5))
    left, right = fig.subplots(1, 2)
    fixed_margins(fig, left=1.0, right=0.5, bottom=0.6, top=0.4, columns=2, gap=0.5)
    boxes = [ax.get_position().bounds for ax in (left, right)]  # figure fractions (x0, y0, w, h)
    assert boxes[0][0] * 10 == pytest.approx(1.0) and boxes[0][1] * 5 == pytest.approx(0.6)
    assert (boxes[1][0] + boxes[1][2]) * 10 == pytest.approx(9.5)
    assert (boxes[1][0] - boxes[0][0] - boxes[0][2]) * 10 == pytest.approx(0.5)
    assert (boxes[0][1] + boxes[0][3]) * 5 == pytest.approx(4.6)
    with pytest.raises(ValueError, match="no room"):
        fixed_margins(fig, left=6, right=5, bottom=0.5, top=0.5)
