# Sourced by the scripts that build test binaries from Go modules (test/e2e/controlplane/build.sh,
# test/tools/otelcol/build.sh). go_build_cache_start returns only when a build is needed: it exits 0
# after print_paths when the stamp matches, takes a per-folder lock (one build at a time; a run that
# waited for the lock finds the build done), and sets up go. The caller defines up_to_date and
# print_paths.
#
#   go_build_cache_start <output folder> <"1" to rebuild> <what, for the up-to-date message>
go_build_cache_start() {
  local out="$1" rebuild="$2" what="$3"
  if [[ "$rebuild" != 1 ]] && up_to_date; then
    echo "build.sh: $what up to date in $out" >&2
    print_paths
    exit 0
  fi
  mkdir -p "$out"
  exec 9>"$out/.lock"
  flock 9
  if [[ "$rebuild" != 1 ]] && up_to_date; then
    echo "build.sh: built by another run meanwhile" >&2
    print_paths
    exit 0
  fi
  command -v go >/dev/null || { echo "build.sh: go is not on PATH" >&2; exit 1; }
  export GOTOOLCHAIN="${NPD_GOTOOLCHAIN:-auto}"
  export CGO_ENABLED=0
}
