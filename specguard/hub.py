"""Fetch one ``config.json`` from the Hugging Face hub, mapping hub errors to clean messages.

Only ``config.json`` is downloaded, through ``huggingface_hub.hf_hub_download``, so the HF
cache, ``HF_HOME``/``HF_HUB_CACHE`` and ``HF_HUB_OFFLINE`` behave as everywhere else. A token
is never printed: messages name the repo and revision only.
"""

from __future__ import annotations

import errno
import os
import sys
from pathlib import Path
from typing import Literal

from specguard.errors import InputError

# One attempt to reach the hub, bounded: huggingface_hub alone waits 10 s per request and retries
# five times with back-off (47 s on a machine whose DNS has no answer) before the catalog may stand in.
PROBE_TIMEOUT_S = 2.0

# Endpoint -> why it could not be reached (None: it answered). Asked once per process, which is one
# run of the CLI: every later file in the run goes straight to the HF cache and the catalog.
_REACHABILITY: dict[str, str | None] = {}


class HubUnavailable(InputError):
    """The hub could not give config.json (offline and not cached, unreachable, or gated): the
    catalog may stand in. A repo or revision that does not exist is a plain InputError."""


def hub_cache_dir() -> Path:
    """The HF hub cache directory, as ``huggingface_hub.constants`` computes it, without importing
    the client (its download machinery costs ~0.4 s, more than the whole check may take): the
    already-imported constants when present, else the same environment variables."""
    constants = sys.modules.get("huggingface_hub.constants")
    if constants is not None:
        return Path(constants.HF_HUB_CACHE)
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"]).expanduser()
    home = os.environ.get("HF_HOME") or os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "huggingface")
    return Path(home).expanduser() / "hub"


def offline_miss(repo_id: str, *, offline: bool, role: str, revision: str | None) -> HubUnavailable | None:
    """Offline with no cache folder for the repo: the error ``download_config`` would raise, found
    without importing the hub client, so the catalog can stand in at once."""
    offline = offline or os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on")
    if not offline or (hub_cache_dir() / ("models--" + repo_id.replace("/", "--"))).is_dir():
        return None
    label = f"{repo_id}@{revision}" if revision else repo_id
    return HubUnavailable(
        f"{role} model {label} is not in the local Hugging Face cache and specguard is offline",
        hint=_OFFLINE_HINT,
    )


def hub_unreachable() -> str | None:
    """Why the hub could not be reached in this run, once an attempt has failed; else None."""
    return next((why for why in _REACHABILITY.values() if why is not None), None)


def reach_hub() -> str | None:
    """None when the hub answers (any HTTP status) within ``PROBE_TIMEOUT_S``, else why not; one
    attempt per run, through huggingface_hub's own HTTP session (its proxy and TLS settings), with
    none of its retries."""
    from huggingface_hub import constants
    from huggingface_hub.utils import get_session

    endpoint = constants.ENDPOINT
    if endpoint not in _REACHABILITY:
        try:
            get_session().head(endpoint, timeout=PROBE_TIMEOUT_S)
            _REACHABILITY[endpoint] = None
        # The session's transport errors differ by huggingface_hub release (requests before 1.0,
        # httpx after) and none of them is ours to report: no answer means unreachable.
        except Exception as error:  # noqa: BLE001 (see above)
            _REACHABILITY[endpoint] = f"{endpoint} gave no answer within {PROBE_TIMEOUT_S:g} s ({error.__class__.__name__})"
    return _REACHABILITY[endpoint]


# A download that fails writing the cache, not reaching the hub.
_CACHE_WRITE_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM})

_UNREACHABLE_HINT = "check the network, pass a local directory, or pass --offline to skip the attempt"

_OFFLINE_HINT = "download it first (`hf download REPO config.json`), pass a local directory, or drop --offline/HF_HUB_OFFLINE"


def download_config(repo_id: str, *, revision: str | None, offline: bool, role: str) -> tuple[Path, str | None, Literal["hf-cache", "hub"]]:
    """(local path of config.json, commit it resolved to when known, "hf-cache" or "hub").

    The HF cache is read first (no network); the hub is asked only when the cache lacks the file.
    """
    from huggingface_hub import constants, hf_hub_download
    from huggingface_hub.errors import (
        EntryNotFoundError,
        GatedRepoError,
        LocalEntryNotFoundError,
        RepositoryNotFoundError,
        RevisionNotFoundError,
    )

    label = f"{repo_id}@{revision}" if revision else repo_id
    local_only = offline or constants.HF_HUB_OFFLINE
    origin: Literal["hf-cache", "hub"] = "hf-cache"
    try:
        try:
            path = Path(hf_hub_download(repo_id=repo_id, filename="config.json", revision=revision, local_files_only=True))
        except LocalEntryNotFoundError:
            if local_only:
                raise
            unreachable = reach_hub()
            if unreachable is not None:
                raise HubUnavailable(f"{role} model {label}: the hub could not be reached ({unreachable}) and the file is not cached", hint=_UNREACHABLE_HINT) from None
            origin = "hub"
            path = Path(hf_hub_download(repo_id=repo_id, filename="config.json", revision=revision))
    except GatedRepoError:
        raise HubUnavailable(f"{role} model {label} is gated", hint="accept its licence on the hub and log in with `hf auth login`") from None
    except RepositoryNotFoundError:
        raise InputError(f"{role} model {label} was not found on the hub", hint="check the repo id, or log in if it is private") from None
    except RevisionNotFoundError:
        raise InputError(f"{role} model {label}: revision {revision!r} does not exist", hint="check the branch, tag or commit") from None
    except LocalEntryNotFoundError:
        if local_only:
            raise HubUnavailable(
                f"{role} model {label} is not in the local Hugging Face cache and specguard is offline",
                hint=_OFFLINE_HINT,
            ) from None
        raise HubUnavailable(
            f"{role} model {label}: the hub could not be reached and the file is not cached",
            hint=_UNREACHABLE_HINT,
        ) from None
    except EntryNotFoundError:
        raise InputError(f"{role} model {label} has no config.json", hint="check the repo id") from None
    # LocalEntryNotFoundError subclasses EntryNotFoundError, so it is caught first above.
    except (OSError, ValueError) as error:
        if isinstance(error, OSError) and error.errno in _CACHE_WRITE_ERRNOS:
            # Not "the hub is unavailable": the catalog must not stand in for a full or read-only disk.
            raise InputError(
                f"cannot write config.json of {label} into the Hugging Face cache at {hub_cache_dir()} ({error.strerror})",
                hint="free space there, or set HF_HUB_CACHE to a writable directory",
            ) from None
        raise HubUnavailable(f"{role} model {label}: {error.__class__.__name__} while fetching config.json", hint="check the repo id and the network") from None
    # Snapshot paths are .../snapshots/<commit>/config.json: the commit is the parent's name.
    commit = path.parent.name if len(path.parent.name) == 40 else None
    return path, commit, origin
