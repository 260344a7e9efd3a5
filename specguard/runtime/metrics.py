"""Prometheus text exposition under SGLang's metric names (``--enable-metrics``, ``GET /metrics``)."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, float("inf"))
#: requests advanced together by one scheduler iteration (a decode step or a speculative round)
BATCH_SIZE_BUCKETS = (1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 48.0, 64.0, 128.0, float("inf"))
#: a finished request's accept length (tokens per verify pass)
ACCEPT_LENGTH_BUCKETS = (1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 5.0, 6.0, 8.0, 12.0, float("inf"))


@dataclass
class _Histogram:
    buckets: tuple[float, ...] = LATENCY_BUCKETS
    counts: list[int] = field(default_factory=list)
    total: float = 0.0
    n: int = 0

    def __post_init__(self) -> None:
        self.counts = [0] * len(self.buckets)

    def observe(self, value: float) -> None:
        for i, bound in enumerate(self.buckets):
            if value <= bound:
                self.counts[i] += 1
        self.total += value
        self.n += 1


class Metrics:
    def __init__(self, model_name: str, num_steps: int, num_draft_tokens: int) -> None:
        self.model_name = model_name
        self.spec_num_steps = num_steps
        self.spec_num_draft_tokens = num_draft_tokens
        self.spec_accept_length = 0.0
        self.spec_accept_rate = 0.0
        self.spec_verify_calls_total = 0
        self.num_running_reqs = 0
        self.num_queue_reqs = 0
        self.gen_throughput = 0.0
        self.prompt_tokens_total = {False: 0, True: 0}
        self.generation_tokens_total = {False: 0, True: 0}
        self.num_requests_total = 0
        self._e2e = _Histogram()
        self._ttft = _Histogram()
        self._batch_size = _Histogram(BATCH_SIZE_BUCKETS)
        self._request_accept_length = _Histogram(ACCEPT_LENGTH_BUCKETS)
        #: accepted tokens (drafts plus the bonus) and verify passes since start, all requests
        self.spec_accept_tokens_total = 0
        self.spec_rounds_total = 0
        self._lock = threading.Lock()

    def observe_ttft(self, seconds: float) -> None:
        with self._lock:
            self._ttft.observe(seconds)

    def observe_batch(self, size: int) -> None:
        with self._lock:
            self._batch_size.observe(size)

    def observe_round(self, accepted_drafts: int) -> None:
        with self._lock:
            self.spec_accept_tokens_total += accepted_drafts + 1
            self.spec_rounds_total += 1

    def observe_accept_length(self, accept_length: float) -> None:
        with self._lock:
            self._request_accept_length.observe(accept_length)

    def observe_request(self, prompt_tokens: int, completion_tokens: int, seconds: float, streaming: bool) -> None:
        with self._lock:
            self.prompt_tokens_total[streaming] += prompt_tokens
            self.generation_tokens_total[streaming] += completion_tokens
            self.num_requests_total += 1
            self._e2e.observe(seconds)

    def render(self) -> str:
        sched = f'model_name="{self.model_name}",engine_type="unified",tp_rank="0",pp_rank="0",moe_ep_rank="0"'
        tok = f'model_name="{self.model_name}",engine_type="unified"'
        lines: list[str] = []

        def gauge(name: str, help_text: str, value: float, labels: str = sched) -> None:
            lines.extend([f"# HELP {name} {help_text}", f"# TYPE {name} gauge", f"{name}{{{labels}}} {float(value)}"])

        gauge("sglang:num_running_reqs", "The number of running requests.", self.num_running_reqs)
        gauge("sglang:num_queue_reqs", "The number of requests in the waiting queue.", self.num_queue_reqs)
        gauge("sglang:gen_throughput", "The generation throughput (token/s).", self.gen_throughput)
        gauge("sglang:token_usage", "The token usage.", 0.0)
        gauge(
            "sglang:spec_accept_length",
            "The average acceptance length of speculative decoding.",
            self.spec_accept_length,
        )
        gauge("sglang:spec_accept_rate", "The acceptance rate of speculative decoding.", self.spec_accept_rate)
        gauge("sglang:spec_num_steps", "The active speculative_num_steps.", self.spec_num_steps)
        gauge("sglang:spec_num_draft_tokens", "The active speculative_num_draft_tokens.", self.spec_num_draft_tokens)
        lines += [
            "# HELP sglang:spec_verify_calls_total The number of speculative verify calls.",
            "# TYPE sglang:spec_verify_calls_total counter",
            f"sglang:spec_verify_calls_total{{{sched}}} {float(self.spec_verify_calls_total)}",
        ]
        with self._lock:
            for name, totals in (
                ("sglang:prompt_tokens_total", self.prompt_tokens_total),
                ("sglang:generation_tokens_total", self.generation_tokens_total),
            ):
                lines += [f"# HELP {name} Number of tokens processed.", f"# TYPE {name} counter"]
                for streaming, value in totals.items():
                    lines.append(f'{name}{{{tok},is_streaming="{str(streaming).lower()}"}} {float(value)}')
            lines += [
                "# HELP sglang:num_requests_total The number of requests.",
                "# TYPE sglang:num_requests_total counter",
                f"sglang:num_requests_total{{{tok}}} {float(self.num_requests_total)}",
            ]
            avg = self.spec_accept_tokens_total / self.spec_rounds_total if self.spec_rounds_total else 0.0
            lines += [
                "# HELP specguard:spec_accept_length_since_start Accepted tokens per verify pass since start, all requests.",
                "# TYPE specguard:spec_accept_length_since_start gauge",
                f"specguard:spec_accept_length_since_start{{{sched}}} {float(avg)}",
            ]
            for name, help_text, hist in (
                ("sglang:e2e_request_latency_seconds", "Histogram of latency in seconds.", self._e2e),
                ("sglang:time_to_first_token_seconds", "Histogram of latency in seconds.", self._ttft),
                (
                    "specguard:batch_size",
                    "Requests advanced together by each scheduler iteration (decode step or speculative round).",
                    self._batch_size,
                ),
                (
                    "specguard:request_spec_accept_length",
                    "Accept length (output tokens per verify pass) of each finished speculative request.",
                    self._request_accept_length,
                ),
            ):
                lines += [f"# HELP {name} {help_text}", f"# TYPE {name} histogram"]
                for bound, count in zip(hist.buckets, hist.counts, strict=True):
                    le = "+Inf" if bound == float("inf") else repr(bound)
                    lines.append(f'{name}_bucket{{{tok},le="{le}"}} {float(count)}')
                lines.append(f"{name}_sum{{{tok}}} {hist.total}")
                lines.append(f"{name}_count{{{tok}}} {float(hist.n)}")
        return "\n".join(lines) + "\n"
