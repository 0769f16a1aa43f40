"""``reach``: capability map of an arm's group (``python -m ros2_ik.reach --help``).

Writes an .npz (see :func:`ros2_ik.core.maps.capability.build_map`) and, when matplotlib
is installed, a PNG slice of the reachability index through the grid centre.
Interrupt it (Ctrl-C: exit status 130) and run the same command again to resume: every
finished chunk is saved.  Exit status 2 on bad input.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import List, Optional

import numpy as np

from ros2_ik.core import errors
from ros2_ik.core.maps.batch import GroupSpec
from ros2_ik.core.maps.capability import MapSettings, build_map, estimate_reach_m
from ros2_ik.core.maps.dataset import write_dataset
from ros2_ik.core.model.joint_limits_yaml import planning_limits_of, read_section

#: What reach says instead of writing the PNG slice when matplotlib is missing.
NO_MATPLOTLIB = ("matplotlib is not installed, an optional extra: pip install matplotlib==3.11.2 "
                 "(or make extras in a clone)")


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="reach", description=__doc__.split("\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--arm", default="panda",
                   help="example-robot-data arm (ros2_ik.core.model.robots)")
    p.add_argument("--urdf", default="",
                   help="your robot's URDF file instead of --arm (with --base and --tip)")
    p.add_argument("--srdf", default="", help="its SRDF file (collision pairs to ignore)")
    p.add_argument("--base", default="", help="the group's base link ('': --arm's usual)")
    p.add_argument("--tip", default="", help="the group's tip link ('': --arm's usual)")
    p.add_argument("--joint-limits", default="",
                   help="MoveIt's joint_limits.yaml: its position bounds and velocities "
                        "replace the URDF's")
    p.add_argument("--resolution", type=float, default=0.05, help="voxel pitch [m]")
    p.add_argument("--radius", type=float, default=0.0,
                   help="grid sphere radius around --center [m]; 0: the arm's reach")
    p.add_argument("--center", type=float, nargs=3, default=(0.0, 0.0, 0.0),
                   help="grid centre in the base frame [m]")
    p.add_argument("--directions", type=int, default=8, help="approach directions per voxel")
    p.add_argument("--rolls", type=int, default=4, help="roll steps per direction")
    p.add_argument("--timeout-ms", type=float, default=5.0, help="budget per target [ms]")
    p.add_argument("--workers", type=int, default=1, help="processes")
    p.add_argument("--chunk-voxels", type=int, default=64, help="voxels per saved chunk")
    p.add_argument("--samples", type=int, default=2_000_000,
                   help="random configurations marking the cells worth solving (see "
                        "ros2_ik.core.maps.capability); more: fewer reachable cells missed")
    p.add_argument("--scene", default="",
                   help="scene YAML file (config/scene_example.yaml format): cells must keep "
                        "--clearance to it")
    p.add_argument("--clearance", type=float, default=0.0, help="clearance to the scene [m]")
    p.add_argument("--dataset", type=int, default=0,
                   help="instead of a map: write N (q, T) rows to --out "
                        "(ros2_ik.core.maps.dataset)")
    p.add_argument("--dataset-mode", default="fk", choices=("fk", "ik"),
                   help="fk: random q and its tip pose; ik: IK solutions of random targets")
    p.add_argument("--seed", type=int, default=0, help="batch seed")
    p.add_argument("--out", default="reach_map.npz", help="output .npz")
    p.add_argument("--png", default="", help="PNG slice; empty: next to --out")
    return p


def _progress():
    try:
        from tqdm import tqdm
    except ImportError:
        return None, None
    bar = tqdm(unit="voxel")

    def update(done: int, total: int) -> None:
        bar.total = total
        bar.n = done
        bar.refresh()
    return update, bar


def _resuming(folder: Path, done: int, total: int) -> None:
    print(f"reach: resuming {folder}: {done} of {total} voxels already done",
          file=sys.stderr)


def _check(args) -> None:
    for name in ("directions", "rolls", "workers", "chunk_voxels", "samples"):
        if getattr(args, name) < 1:
            raise errors.InvalidArgument(f"--{name.replace('_', '-')}: must be >= 1")
    if not args.timeout_ms > 0:
        raise errors.InvalidArgument("--timeout-ms: must be > 0")


def group_spec(args) -> GroupSpec:
    """Return the GroupSpec of ``--arm`` or ``--urdf`` (raises :mod:`errors` naming the flag)."""
    limits = tuple(sorted(_joint_limits(args.joint_limits).items())) \
        if args.joint_limits else ()
    if not args.urdf:
        return GroupSpec(arm=args.arm, base=args.base, tip=args.tip, planning_limits=limits)
    return GroupSpec(urdf=_read(args.urdf, "--urdf"),
                     srdf=_read(args.srdf, "--srdf") if args.srdf else "",
                     base=args.base, tip=args.tip, planning_limits=limits)


def _read(path: str, flag: str) -> str:
    try:
        return Path(path).read_text()
    except OSError as exc:
        raise errors.InvalidArgument(f"{flag}: cannot read {path}: {exc}") from None


def _joint_limits(path: str) -> dict:
    """Joint -> PlanningLimits of MoveIt's joint_limits.yaml at ``path`` (``!degrees`` too)."""
    return planning_limits_of(read_section(_read(path, "--joint-limits"),
                                           f"--joint-limits: {path}"))


def save_slice_png(arrays, path: Path) -> bool:
    """Plot the z slice nearest the grid centre; False when matplotlib is missing."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    v, idx = arrays["voxels"], arrays["reach_index"]
    z0 = v[np.argmin(np.abs(v[:, 2] - np.median(v[:, 2]))), 2]
    sel = np.isclose(v[:, 2], z0)
    fig, ax = plt.subplots(figsize=(5, 4.5))
    sc = ax.scatter(v[sel, 0], v[sel, 1], c=idx[sel], vmin=0, vmax=1, marker="s", cmap="viridis")
    fig.colorbar(sc, label="reachability index")
    ax.set(xlabel="x [m]", ylabel="y [m]", title=f"z = {z0:.3f} m", aspect="equal")
    fig.savefig(path, dpi=100, bbox_inches="tight")
    plt.close(fig)
    return True


def main(argv: Optional[List[str]] = None) -> int:
    """Run the CLI; returns the exit status."""
    args = _parser().parse_args(argv)
    if args.dataset:
        return _dataset(args)
    try:
        _check(args)
        spec = group_spec(args)
        radius = args.radius or estimate_reach_m(spec.build()[1])
        settings = MapSettings(args.resolution, radius, tuple(args.center), args.directions,
                               args.rolls, args.timeout_ms * 1e-3, args.seed, args.chunk_voxels,
                               samples=args.samples, scene_file=args.scene,
                               clearance_m=args.clearance)
        update, bar = _progress()
        arrays = build_map(spec, Path(args.out), settings, args.workers, update, _resuming)
        if bar is not None:
            bar.close()
    except errors.IKError as exc:
        print(f"reach: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"\nreach: interrupted; every finished chunk is saved: run the same command "
              f"again to resume ({args.out}.partial)", file=sys.stderr)
        return 130
    png = Path(args.png or Path(args.out).with_suffix(".png"))
    wrote = save_slice_png(arrays, png)
    print(f"{len(arrays['voxels'])} voxels x {len(arrays['rotations'])} orientations; "
          f"mean reachability {arrays['reach_index'].mean():.3f}; wrote {args.out}"
          + (f" and {png}" if wrote else f" (no PNG: {NO_MATPLOTLIB})"))
    return 0


def _dataset(args) -> int:
    """Write a dataset (``--dataset N``); returns the exit status."""
    try:
        out = write_dataset(group_spec(args), Path(args.out), args.dataset,
                            args.dataset_mode, args.seed, timeout_s=args.timeout_ms * 1e-3,
                            workers=args.workers)
    except errors.IKError as exc:
        print(f"reach: error: {exc}", file=sys.stderr)
        return 2
    print(f"{args.dataset} {args.dataset_mode} rows; wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
