"""Compiles lexkb's one C extension, the keyword ranking kernel (lexkb/_rank_kernel.c), as the
wheel is built: into the wheel, or beside its source for an editable install (`uv sync`).

A machine without a C compiler still gets a working wheel: the build warns and leaves the
kernel out, and lexkb.keyword_ranking scores with numpy instead (the same rows and floats, a
keyword search about a third slower on a corpus of ObliQA's size; BENCHMARKS.md).
"""

from __future__ import annotations

import os
import shutil
import sysconfig
import tempfile
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

MODULE = "lexkb._rank_kernel"
SOURCE = "lexkb/_rank_kernel.c"


class RankKernelHook(BuildHookInterface):
    PLUGIN_NAME = "custom"
    _work: Path | None = None

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name != "wheel":
            return
        editable = version == "editable"
        try:
            built = self._compile(in_place=editable)
        except Exception as error:  # any compiler or platform failure: build without it
            self.app.display_warning(
                f"the keyword ranking kernel was not compiled ({error}); lexkb will rank "
                "with numpy, the same results more slowly"
            )
            if editable:  # an earlier build's module would be loaded from beside its source
                for stale in Path(self.root, "lexkb").glob("_rank_kernel.*"):
                    if stale.suffix != ".c":
                        stale.unlink()
            return
        build_data["pure_python"] = False
        build_data["infer_tag"] = True
        if not editable:
            suffix = sysconfig.get_config_var("EXT_SUFFIX")
            build_data["force_include"][str(built)] = MODULE.replace(".", "/") + suffix

    def _compile(self, in_place: bool) -> Path:
        """The compiled module's path: beside its source when `in_place`, else in a folder of
        the build's own."""
        from setuptools import Distribution, Extension
        from setuptools.command.build_ext import build_ext

        extension = Extension(MODULE, [SOURCE], extra_compile_args=["-O2"])
        work = self._work = Path(tempfile.mkdtemp(prefix="lexkb-kernel-"))
        here = Path.cwd()
        os.chdir(self.root)
        try:
            command = build_ext(Distribution({"ext_modules": [extension]}))
            command.inplace = in_place
            command.force = True  # the in-place module may be older than its source
            command.build_lib = str(work / "lib")
            command.build_temp = str(work / "temp")
            command.ensure_finalized()
            command.run()
            return Path(self.root, command.get_ext_fullpath(MODULE)).resolve()
        finally:
            os.chdir(here)

    def finalize(self, version: str, build_data: dict[str, Any], artifact_path: str) -> None:
        """The compile's folder goes once the wheel holds what it built."""
        if self._work is not None:
            shutil.rmtree(self._work, ignore_errors=True)
