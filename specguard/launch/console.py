"""The launcher's terminal: progress and the verification report on stderr (a ``Reporter`` for the
supervisor), on a stream that survives its reader going away."""

from __future__ import annotations

from typing import IO, Any


class ResilientStream:
    """A stream that goes quiet instead of raising once its reader is gone (``launch ... | head``,
    a closed terminal): the launcher keeps supervising, and stopping, the runtime either way."""

    def __init__(self, stream: IO[str]) -> None:
        self._stream = stream
        self.broken = False

    def write(self, text: str) -> int:
        if not self.broken:
            try:
                return self._stream.write(text)
            except (BrokenPipeError, OSError):
                self.broken = True
        return len(text)

    def flush(self) -> None:
        if not self.broken:
            try:
                self._stream.flush()
            except (BrokenPipeError, OSError):
                self.broken = True

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)



class RichReporter:
    """Progress (a spinner on a terminal, plain lines elsewhere) and the verification report, on stderr."""

    def __init__(self, console: Any, predicted: Any) -> None:
        self.console = console
        self.predicted = predicted
        self.status: Any = None
        self.label = ""

    def phase(self, text: str) -> None:
        self.close_progress()
        self.label = text
        if self.console.is_terminal:
            self.status = self.console.status(text)
            self.status.start()
        else:
            self.console.print(f"{text} ...", markup=False, highlight=False)

    def waiting(self, seconds: float, timeout: float) -> None:
        if self.status is not None:
            self.status.update(f"{self.label} ({seconds:.0f} s of {timeout:g} s)")

    def close_progress(self) -> None:
        if self.status is not None:
            self.status.stop()
            self.status = None

    def ready(self, seconds: float) -> None:
        self.console.print(f"[green]ready[/green]: /health_generate answered 200 after {seconds:.1f} s")

    def server_info(self, route: str, info: dict[str, Any]) -> None:
        from rich.table import Table

        from specguard.launch.verify import compare, speculation_on

        rows = compare(self.predicted, info)
        table = Table(title=f"resolved by the runtime ({route}) vs predicted by specguard", expand=False)
        for column in ("field", "specguard", "runtime", ""):
            table.add_column(column)
        for row in rows:
            table.add_row(row.field, str(row.predicted), str(row.resolved), "ok" if row.matches else "[yellow]differs[/yellow]")
        self.console.print(table)
        for row in rows:
            if not row.matches:
                self.console.print(f"[yellow]difference:[/yellow] the runtime resolved {row.field}={row.resolved!r}, specguard predicted {row.predicted!r}")
        if self.predicted.algorithm and not speculation_on(info):
            self.console.print("[bold yellow]speculation is OFF in the runtime[/bold yellow] although the launch asks for it")
        if info.get("reference_runtime"):
            self.console.print(f"[dim]reference runtime: draft mode {info.get('draft_mode')}, ignored flags {info.get('ignored_flags') or []}[/dim]")

    def smoke(self, result: Any) -> None:
        if result.ok:
            text = result.text.strip().replace("\n", " ")
            self.console.print(
                f"[green]smoke request[/green] {result.route}: {result.completion_tokens} tokens in {result.seconds:.1f} s: {text[:160]!r}",
            )
        else:
            self.console.print(f"[red]smoke request failed[/red] ({result.route}): {result.error}")

    def statistics(self, info: dict[str, Any] | None, smoke: Any, log_accept_len: float | None) -> None:
        from specguard.launch.verify import (
            accept_length_meaning,
            avg_spec_accept_length,
            batching_summary,
            speculation_on,
        )

        batching = batching_summary(info)
        if batching is not None:
            self.console.print(f"scheduler (/server_info batching_stats): {batching}", markup=False, highlight=False)
        if info is not None and not speculation_on(info):
            self.console.print("speculative statistics: none (speculation is off)")
            return
        server_avg = avg_spec_accept_length(info)
        per_request = (smoke.spec or {}) if smoke is not None else {}
        if per_request.get("spec_accept_length") is not None:
            self.console.print(
                f"speculative statistics (smoke request): accept length {per_request['spec_accept_length']:.2f}, "
                f"accept rate {per_request.get('spec_accept_rate', 0):.2f}, {per_request.get('spec_verify_ct')} verify passes"
            )
        value = server_avg if server_avg is not None else per_request.get("spec_accept_length") or log_accept_len
        if server_avg is not None:
            self.console.print(f"avg_spec_accept_length (server, /server_info): {server_avg:.2f}")
        else:
            self.console.print(
                "avg_spec_accept_length: not reported yet (the server rolls it up every --decode-log-interval decode steps, 40 by default)"
            )
        if value is not None:
            self.console.print(f"  meaning: {accept_length_meaning(float(value), info)}", markup=False, highlight=False)

    def serving(self, where: str) -> None:
        self.console.print(f"[bold green]serving[/bold green] at {where}; Ctrl-C stops the runtime")

    def problem(self, text: str) -> None:
        self.console.print(f"[yellow]{text}[/yellow]")
