"""``jaxscale sweep CONFIG | --preset NAME [--out DIR] [--status] [--json]``: Pearce & Song's experiments."""

from __future__ import annotations

import argparse

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
    from jaxscale import sweep, sweep_status
    from jaxscale.cli._output import print_json

    if (args.config is None) == (args.preset is None):
        raise ValueError("give exactly one of CONFIG or --preset NAME")
    which = {"preset": args.preset, "out": args.out, "corpus": args.corpus}
    if args.status:
        result = sweep_status(args.config, **which)
    else:
        o.check_out(args.out, hold=False)  # the verb holds it (process 0 of a multi-process run)
        result = sweep(args.config, **which, microbatches=args.microbatches, progress=not args.no_progress,
                       distributed=args.distributed, coordinator=args.coordinator,
                       num_processes=args.num_processes, process_id=args.process_id,
                       heartbeat_timeout=args.heartbeat_timeout)
        if result.result is None:  # not process 0 of a multi-process run: process 0 reports
            return 0
    print_json(result.to_dict()) if args.json else print(result.text())
    return 0
