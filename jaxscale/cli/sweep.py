"""``jaxscale sweep CONFIG | --preset NAME [--out DIR] [--status] [--json]``: Pearce & Song's experiments."""

from __future__ import annotations

import argparse
from pathlib import Path

from jaxscale.cli import _options as o


def register(subparsers: argparse._SubParsersAction) -> None:
    p = o.command(
        subparsers, "sweep", "train a family of transformers and fit N_opt ∝ C^a on N_T/C_T and N_\\E/C_\\E",
        "Train the runs of a sweep config (model sizes, learning-rate grid, budgets, schemes) "
        "and fit Chinchilla's Method 1 on both parameter bases (Pearce & Song 2024, Section 3). "
        "Runs are checkpointed: rerunning the same command resumes a killed sweep. The runs table, the "
        "report and the figures are this command's product: they are written to --out.",
        "jaxscale sweep --preset smoke --out out/sweeps/smoke\n"
        "jaxscale sweep my_sweep.toml --coordinator 10.0.0.1:1234 --num-processes 2 --process-id 0",
    )
    p.add_argument("config", nargs="?", help="sweep config file (.json or .toml)")
    p.add_argument("--preset", help="named sweep configuration: smoke, cpu or paper")
    p.add_argument("--out", help="output directory (default: out/sweeps/<name>)")
    p.add_argument(
        "--corpus", metavar="PATH",
        help="text corpus (.txt or .txt.gz) to train on instead of the config's; a config without one "
             "takes $JAXSCALE_CORPUS, else ../shared/data/enwiki_30k_articles.txt.gz beside the jaxscale clone",
    )  # fmt: skip
    p.add_argument(
        "--microbatches", type=o.at_least(1), default=1, metavar="K",
        help="compute each device's share of a batch in K parts one after another: the same runs in 1/K of "
             "the activation memory (the paper preset on one 16 GB accelerator: 8)",
    )  # fmt: skip
    p.add_argument(
        "--status", action="store_true",
        help="train nothing: say which runs of the sweep in --out are done and the device-minutes left at the "
             "rate each size last trained at",
    )  # fmt: skip
    o.add_json(p)
    p.add_argument("--no-progress", action="store_true", help="hide progress bars")
    group = p.add_argument_group(
        "multi-process training",
        "one process per host or per GPU, all with the same command and --out on shared storage; "
        "--coordinator, --num-processes and --process-id imply --distributed",
    )
    group.add_argument(
        "--distributed", action="store_true",
        help="join a multi-process run; on Cloud TPU pods, SLURM and Open MPI JAX detects the rest",
    )  # fmt: skip
    group.add_argument("--coordinator", metavar="HOST:PORT", help="process 0's address and a free port")
    group.add_argument("--num-processes", type=int, metavar="N", help="number of processes")
    group.add_argument("--process-id", type=int, metavar="I", help="this process's index, 0 to N-1")
    group.add_argument(
        "--heartbeat-timeout", type=int, metavar="S",
        help="seconds after which a silent process counts as dead and the others stop (default: JAX's, 100)",
    )  # fmt: skip
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from jaxscale._api.sweep import SweepReport
    from jaxscale.cli._output import print_json
    from jaxscale.lm import distributed, presets
    from jaxscale.lm.sweep import run_sweep

    if (args.config is None) == (args.preset is None):
        raise ValueError("give exactly one of CONFIG or --preset NAME")
    cfg = presets.preset(args.preset) if args.preset else presets.load_config(args.config)
    cfg = presets.with_corpus(cfg, args.corpus)
    out = Path(args.out) if args.out else Path("out") / "sweeps" / cfg.name
    if args.status:
        from jaxscale.lm.sweep_status import sweep_status

        status = sweep_status(cfg, out)
        print_json(status.to_dict()) if args.json else print(status.text(), end="")
        return 0
    several = args.distributed or (args.coordinator, args.num_processes, args.process_id) != (None, None, None)
    o.check_out(out, hold=not several)
    if several:
        distributed.initialize(args.coordinator, args.num_processes, args.process_id, args.heartbeat_timeout)
        if distributed.is_main_process():
            o.hold_out(out)
    try:
        result = run_sweep(cfg, out, progress=not args.no_progress, microbatches=args.microbatches)
    except distributed.ProcessLost as err:
        distributed.exit_now(f"jaxscale sweep: error: {err}")
    if result is None:  # not process 0 of a multi-process run: process 0 reports
        return 0
    report = SweepReport(cfg, result, out)
    report.save(out)  # the figures and summary.json, whose object --json prints
    if args.json:
        print_json(report.to_dict())
    else:
        print(report.text())
    return 0
