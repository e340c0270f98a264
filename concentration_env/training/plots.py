"""Learning-curve plots for run folders (matplotlib, headless)."""

from __future__ import annotations

from pathlib import Path

from concentration_env.game.rules import Rules
from concentration_env.training.config import TrainConfig

LEVEL_STYLES = {"optimal": "tab:green", "greedy": "tab:orange"}


def baseline_levels(rules: Rules) -> dict[str, float]:
    """Expected moves per solitaire game of the exact DP baselines (empty for multi-player;
    a baseline the DP cannot value on these rules, e.g. greedy on checkerboard backs, is left out)."""
    if rules.num_players != 1:
        return {}
    from baselines.optimal import expected_moves

    levels = {}
    for name in LEVEL_STYLES:
        try:
            levels[name] = float(expected_moves(rules, name))
        except ValueError:
            continue  # the plot goes without that line rather than the run without its files
    return levels


def learning_curve(run_dir: Path, config: TrainConfig) -> Path:
    """Draw ``eval.csv`` of a run with the baselines' levels; returns the PNG's path."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from concentration_env.training.run_folder import read_eval_csv

    rules = config.resolved_rules
    data = read_eval_csv(run_dir / "eval.csv")
    solitaire = rules.num_players == 1
    column = "moves" if solitaire else "win"
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.plot(data["timesteps"], data[column], marker="o", label=f"{config.algo} ({config.eval_episodes} seeded deals)")
    for name, level in baseline_levels(rules).items():
        ax.axhline(level, linestyle="--", color=LEVEL_STYLES[name], label=f"{name}: {level:.2f}")
    if not solitaire:
        ax.axhline(0.5, linestyle="--", color="grey", label=f"even with {config.opponents[0]}")
    ax.set_xlabel("env steps (flips)")
    ax.set_ylabel(
        "moves per game (lower is better)"
        if solitaire
        else f"win rate vs {config.opponents[0]}, both seats (ties half)"
    )
    ax.set_title(f"{run_dir.name}: {rules.num_cards} cards, {config.observation_mode} mode")
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    path = run_dir / "learning_curve.png"
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path
