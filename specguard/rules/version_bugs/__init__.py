"""VB: known bugs and renamed flags of specific SGLang versions."""

from specguard.rules.version_bugs import (
    VB001_flashinfer_draft_graph_padding_crash as VB001,
)
from specguard.rules.version_bugs import (
    VB002_graph_padding_flag_ignored_for_spec as VB002,
)
from specguard.rules.version_bugs import VB003_cuda_graph_flag_renamed as VB003
from specguard.rules.version_bugs import VB004_unknown_or_abbreviated_flag as VB004
from specguard.rules.version_bugs import VB005_flag_renamed_for_version as VB005
from specguard.rules.version_bugs import (
    VB006_graph_padding_off_with_torch_compile as VB006,
)
from specguard.rules.version_bugs import VB010_flag_of_other_releases as VB010
from specguard.rules.version_bugs import VB011_env_var_of_other_releases as VB011
from specguard.rules.version_bugs import VB012_architecture_not_in_release as VB012
from specguard.rules.version_bugs import VB013_value_refused_by_release as VB013
from specguard.rules.version_bugs import VB014_fails_on_newest_release as VB014
from specguard.rules.version_bugs import VB060_ngram_flag_renamed_for_version as VB060

RULES = (VB001.RULE, VB002.RULE, VB003.RULE, VB004.RULE, VB005.RULE, VB006.RULE, VB010.RULE, VB011.RULE, VB012.RULE, VB013.RULE, VB014.RULE, VB060.RULE)
