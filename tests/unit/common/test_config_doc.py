from pathlib import Path

from flintlock.common.config_doc import render_markdown

DOC = Path(__file__).resolve().parents[3] / "docs" / "configuration.md"


def test_configuration_reference_matches_the_options():
    assert DOC.read_text() == render_markdown(), (
        "docs/configuration.md is stale: run `python -m flintlock.common.config_doc "
        "> docs/configuration.md`"
    )


def test_reference_lists_flinks_keys():
    text = render_markdown()
    for key in ("taskmanager.memory.segment-size", "execution.checkpointing.interval",
                "restart-strategy.type", "execution.buffer-timeout"):
        assert f"`{key}`" in text
