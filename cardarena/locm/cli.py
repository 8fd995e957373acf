"""The ``locm`` command line."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from .agents import RandomAgent
from .javarandom import JavaRandom
from .params import ParameterError, random_seed
from .rules import DEFAULT_VERSION, VERSIONS
from .state import State

USAGE_ERROR = 2


def _seed(text: str) -> int:
    from .javarandom import parse_java_long

    try:
        return parse_java_long(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a 64-bit integer: {text!r}") from None


def _cmd_demo(args: argparse.Namespace) -> int:
    seed = args.seed if args.seed is not None else random_seed()
    state = State.new(args.version, {"seed": seed})
    # The agents' own seeds come from the game seed, so --seed alone replays the demo.
    derive = JavaRandom(seed)
    agents = (RandomAgent(derive.next_long()), RandomAgent(derive.next_long()))
    actions = 0
    while not state.is_terminal:
        state.apply(agents[state.current_player].act(state))
        actions += 1
    p0, p1 = state.players
    print(f"LOCM {state.version}: random (player 0) vs random (player 1)")
    winner = "no winner" if state.winner is None else f"player {state.winner} wins"
    print(
        f"{winner} ({state.end_reason.name.lower().replace('_', ' ')}) after "
        f"{state.turn + 1} battle turns and {actions} actions; health {p0.health} vs {p1.health}"
    )
    print(f"reproduce with: locm demo --version {state.version} --seed {seed}")
    print("game parameters:")
    for key, value in state.params.as_dict().items():
        print(f"  {key}={value}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="locm",
        description="Legends of Code and Magic 1.0/1.2/1.5, faithful to the official referees.",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    demo = commands.add_parser(
        "demo", help="play one full game between two built-in random agents and print it"
    )
    demo.add_argument("--version", choices=VERSIONS, default=DEFAULT_VERSION)
    demo.add_argument("--seed", type=_seed, help="game seed (default: random)")
    demo.set_defaults(run=_cmd_demo)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "run", None) is None:
        parser.print_help()
        return USAGE_ERROR
    try:
        return int(args.run(args))
    except (ParameterError, ValueError) as error:
        print(f"locm: error: {error}", file=sys.stderr)
        return USAGE_ERROR


if __name__ == "__main__":
    sys.exit(main())
