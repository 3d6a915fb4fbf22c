"""`playbook llm serve`: a local model for runs without an API key or a subscription."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from flows.cli._render import err, out

if TYPE_CHECKING:
    from flows.models.local_llm import LocalServer

app = typer.Typer(
    name="llm",
    help="A local model (llama.cpp) for the `openai` provider.\n\nExample: [bold]playbook llm serve[/bold]",
    no_args_is_help=True,
)


def _ready(server: LocalServer) -> None:
    out.print(f"Serving {server.model_name} at {server.base_url} (Ctrl-C stops it).", highlight=False)
    err.print(
        "In another terminal, point a run at it:\n"
        f"  PLAYBOOK_OPENAI_BASE_URL={server.base_url} PLAYBOOK_REFLECTOR_MODEL={server.model_name}"
        f" PLAYBOOK_CURATOR_MODEL={server.model_name} playbook nightly --llm openai",
        highlight=False,
    )


@app.command("serve")
def serve_cmd(
    model: Annotated[
        Path | None, typer.Option("--model", help="A GGUF model file (default: the bundled SmolLM2-135M).")
    ] = None,
    port: Annotated[int, typer.Option(help="The loopback port.")] = 8080,
    context: Annotated[int, typer.Option(help="Context size in tokens.")] = 8192,
    threads: Annotated[int, typer.Option(help="CPU threads.")] = 2,
) -> None:
    """Serve a local model on 127.0.0.1 with llama.cpp's server (the `local-llm` extra), until Ctrl-C.

    A small model on a CPU is slow and weak: the `openai` provider bounds its answers by grammar, and the
    run prints a progress line when no terminal is attached. Pricing: $0 unless `prices` name the model.

    Example: [bold]playbook llm serve --port 8080[/bold]
    """
    from flows.models.local_llm import serve_local

    serve_local(model, port=port, context=context, threads=threads, ready=_ready)
