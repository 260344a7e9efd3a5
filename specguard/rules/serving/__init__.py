"""SV: how the server is exposed: who can reach it, and whose code it runs."""

from specguard.rules.serving import SV001_server_exposed_without_api_key as SV001
from specguard.rules.serving import SV002_remote_code_will_run as SV002

RULES = (SV001.RULE, SV002.RULE)
