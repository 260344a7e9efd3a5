"""The runtime's own shape: fused weights kept once, the KV cache module, the drafter seam, and
the flags declared once (parser and ServerArgs derived from one table, SGLang's defaults read
from its parser table)."""

from __future__ import annotations

import json

import torch
from runtime_helpers import llama_config, random_model, write_checkpoint

from specguard.runtime import flags
from specguard.runtime.loader import load_model
from specguard.runtime.model import KVCache
from specguard.runtime.speculative import Decoder, SamplingParams, SpecConfig

PROMPT = [3, 17, 5, 42, 8, 9, 11, 2]


def _storage_bytes(tensors) -> int:
    return sum({t.untyped_storage().data_ptr(): t.untyped_storage().nbytes() for t in tensors}.values())


def _held_tensors(model):
    for module in model.modules():
        yield from module.parameters(recurse=False)
        yield from module.buffers(recurse=False)
        yield from (v for v in vars(module).values() if isinstance(v, torch.Tensor) and v.numel() > 0)


def test_fused_weights_are_the_only_copy(tmp_path):
    cfg = llama_config(attention_bias=True)  # biases are fused too
    model = load_model(write_checkpoint(tmp_path / "m", cfg, random_model(cfg)))
    params = _storage_bytes(model.parameters())
    assert _storage_bytes(_held_tensors(model)) == params  # no tensor beside the parameters' storage
    attn, mlp = model.model.decoder_layers[0].self_attn, model.model.decoder_layers[0].mlp
    assert attn._wqkv is not None and attn._bqkv is not None and mlp._w_gate_up is not None
    for fused, parts in ((attn._wqkv, (attn.q_proj, attn.k_proj, attn.v_proj)), (mlp._w_gate_up, (mlp.gate_proj, mlp.up_proj))):
        assert all(p.weight.untyped_storage().data_ptr() == fused.untyped_storage().data_ptr() for p in parts)
        torch.testing.assert_close(fused, torch.cat([p.weight for p in parts]), rtol=0, atol=0)
    assert attn.q_proj.bias is not None and attn.q_proj.bias.untyped_storage().data_ptr() == attn._bqkv.untyped_storage().data_ptr()


def test_fused_model_computes_what_the_unfused_one_does(tmp_path):
    cfg = llama_config(attention_bias=True)
    reference = random_model(cfg)
    fused = load_model(write_checkpoint(tmp_path / "m", cfg, reference))
    tokens = torch.tensor(PROMPT)
    with torch.inference_mode():
        expected = reference.forward_train(tokens.unsqueeze(0))[0]
        fused.setup_cache(64)
        got = fused(tokens, None, 0)
    torch.testing.assert_close(got, expected, rtol=1e-4, atol=1e-4)


def test_kv_cache_update_writes_the_bound_row_and_returns_its_prefix():
    cache = KVCache(rows=3, n_kv=2, max_len=8, head_dim=4, dtype=torch.float32, device=torch.device("cpu"))
    cache.bind(1)
    k1, v1 = torch.randn(3, 2, 4), torch.randn(3, 2, 4)
    keys, values = cache.update(0, k1, v1)
    assert keys.shape == values.shape == (2, 3, 4)
    torch.testing.assert_close(keys, k1.transpose(0, 1))
    k2, v2 = torch.randn(2, 2, 4), torch.randn(2, 2, 4)
    keys, values = cache.update(3, k2, v2)
    torch.testing.assert_close(keys, torch.cat([k1, k2]).transpose(0, 1))
    torch.testing.assert_close(values, torch.cat([v1, v2]).transpose(0, 1))
    assert cache.k[0].abs().sum() == 0 and cache.k[2].abs().sum() == 0  # other rows untouched
    cache.move(torch.tensor([4, 2]), 1)
    torch.testing.assert_close(cache.k[1][:, 1], k2[1])
    torch.testing.assert_close(cache.k[1][:, 2], k1[2])


def test_kv_cache_update_rows_writes_one_token_per_row():
    cache = KVCache(rows=3, n_kv=1, max_len=4, head_dim=2, dtype=torch.float32, device=torch.device("cpu"))
    k, v = torch.randn(2, 1, 2), torch.randn(2, 1, 2)
    rows, slots = torch.tensor([0, 2]), torch.tensor([1, 3])
    keys, _ = cache.update_rows(k, v, rows, slots, span=4, row_range=None)
    assert keys.shape == (2, 1, 4, 2)
    torch.testing.assert_close(keys[0, :, 1], k[0])
    torch.testing.assert_close(keys[1, :, 3], k[1])
    torch.testing.assert_close(cache.v[2, :, 3], v[1])


def test_a_round_without_a_drafter_is_a_plain_decode_step():
    """The round asks no question of its drafter: with none (NoDrafter) it drafts nothing, so its
    verify forward is exactly a plain step and yields the same greedy tokens."""
    model = random_model(llama_config())
    model.setup_cache(64, rows=2)
    decoder = Decoder(model, SpecConfig())
    params = SamplingParams(max_new_tokens=8, temperature=0.0)
    plain, rounds = decoder.start(PROMPT, params, row=0), decoder.start(PROMPT, params, row=1)
    decoder.prefill(plain)
    decoder.prefill(rounds)
    for _ in range(8):
        step = decoder.plain_step([plain])[0]
        result = decoder.spec_round(rounds)
        assert result.tokens == step.tokens and result.accepted_drafts == 0
    assert plain.committed == rounds.committed


def test_parser_and_server_args_come_from_one_declaration():
    parser_dests = {a.dest for a in flags._parser()._actions if a.dest != "help"}
    field_names = {f.name for f, _ in flags.runtime_flags()}
    assert parser_dests == field_names
    options = {o for a in flags._parser()._actions for o in a.option_strings if o not in ("-h", "--help")}
    assert options == set(flags.SUPPORTED_FLAGS)


def test_sglang_defaults_are_read_from_its_parser_table_not_copied():
    table = {e["dest"]: e for e in json.loads(flags._SGLANG_FLAGS_TABLE.read_text())["flags"]}
    # the runtime's own defaults, and the spelling of SGLang's earlier releases, declared as such
    own = {"device", "scheduler", "cuda_graph_max_bs"}
    defaults = flags.ServerArgs()
    checked = 0
    for f, meta in flags.runtime_flags():
        if f.name in own:
            assert meta["source"], f"{f.name}: a default that is not SGLang's names its source"
            continue
        assert getattr(defaults, f.name) == table[f.name]["default"], f.name
        assert set(table[f.name]["option_strings"]) <= set(meta["option_strings"]), f.name
        checked += 1
    assert checked >= 30
    assert (defaults.decode_log_interval, defaults.speculative_ngram_max_trie_depth) == (40, 18)


def test_resolution_steps_are_separate_and_leave_the_given_arguments_alone():
    given = flags.ServerArgs(model_path="/m", speculative_algorithm="ngram")
    resolved = flags.resolve_speculative(given)
    assert given.speculative_algorithm == "ngram" and given.speculative_num_draft_tokens is None
    assert (resolved.speculative_algorithm, resolved.speculative_num_draft_tokens) == ("NGRAM", 12)
    assert flags.speculative_warnings(given, resolved) == [flags.WARN_MAX_RUNNING, flags.WARN_NGRAM_DRAFT_TOKENS]
    assert flags.speculative_warnings(resolved, resolved) == []  # nothing changed: nothing to log
