"""``python -m specguard.runtime [SGLang-style flags]``: start the reference runtime's server."""

from __future__ import annotations

import json
import logging
import os
import shlex
import sys
import threading
import time
import urllib.error
import urllib.request

from specguard.redact import redact_argv
from specguard.runtime.errors import RuntimeInputError, SchedulerExited
from specguard.runtime.flags import ServerArgs, parse_flags

logger = logging.getLogger("specguard.runtime")

WARMUP_PROMPT = "The capital city of France is"


def _warmup(args: ServerArgs, state, headers: dict[str, str]) -> None:  # type: ignore[no-untyped-def]
    """Like SGLang's _execute_server_warmup: poll /model_info, send one /generate, log readiness."""
    base = f"http://{'127.0.0.1' if args.host in ('0.0.0.0', '::') else args.host}:{args.port}"
    deadline = time.monotonic() + 120
    while True:
        try:
            with urllib.request.urlopen(urllib.request.Request(base + "/model_info", headers=headers), timeout=5):
                break
        except (urllib.error.URLError, OSError):
            if time.monotonic() > deadline:
                logger.error("warm-up failed: /model_info did not answer within 120 s")
                os._exit(1)
            time.sleep(0.1)
    if not args.skip_server_warmup:
        body = json.dumps({"text": WARMUP_PROMPT, "sampling_params": {"temperature": 0, "max_new_tokens": 8}}).encode()
        request = urllib.request.Request(
            base + "/generate", data=body, headers={**headers, "Content-Type": "application/json"}
        )
        try:
            with urllib.request.urlopen(request, timeout=300) as resp:
                resp.read()
        except (urllib.error.URLError, OSError) as exc:
            logger.error("warm-up request failed: %s", exc)
            os._exit(1)
    state.ready = True
    logger.info("The server is fired up and ready to roll!")


def serve(argv: list[str]) -> int:
    parsed = parse_flags(argv)
    args = parsed.args
    from specguard.runtime.scheduler_process import SchedulerClient, configure_logging

    configure_logging(args.log_level)
    for warning in parsed.warnings:
        logger.warning(warning)

    import uvicorn

    from specguard.runtime.server import ServerState, build_app

    server: uvicorn.Server | None = None
    scheduler_died = False

    def on_scheduler_exit() -> None:
        # As SGLang does when a scheduler process fails (0.5.23 managers/scheduler.py:6373, SIGQUIT
        # to the server, whose handler kills the process tree): the server goes down too, so a
        # supervisor sees the exit instead of a server that answers nothing.
        nonlocal scheduler_died
        scheduler_died = True
        if server is not None:
            server.should_exit = True

    scheduler = SchedulerClient(args, on_exit=on_scheduler_exit)
    try:
        ready = scheduler.start()
        launch_command = "python -m specguard.runtime " + shlex.join(redact_argv(argv))
        state = ServerState(scheduler, ready.info, ready.model_info, launch_command)
        app = build_app(state, args.api_key, args.enable_metrics)
        headers = {"Authorization": f"Bearer {args.api_key}"} if args.api_key else {}
        threading.Thread(target=_warmup, args=(args, state, headers), name="specguard-warmup", daemon=True).start()
        config = uvicorn.Config(app, host=args.host, port=args.port, log_level=args.log_level.lower(), access_log=False)
        server = uvicorn.Server(config)
        server.run()
    finally:
        scheduler.stop()
    return 0 if server.started and not scheduler_died else 1


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        return serve(argv)
    except RuntimeInputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except SchedulerExited as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
