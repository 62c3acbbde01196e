#!/usr/bin/env bash
# docs/BEYOND.md's recipes, run for real: GNU parallel spreading `batched --threads 1` over jobs on
# this machine (`--pipepart` on a file, `--pipe` on a zcat stream) and over ssh (`--pipe -S`), on
# this machine's man page sources (text_file man: TEXT_BYTES of short real lines). The ssh side is
# an sshd of the script's own on a free port of 127.0.0.1: host key, user key, authorized_keys,
# known_hosts and config all made in the scratch folder (WORK/beyond-sshd), key login only, no
# traffic anywhere else, and stopped by its pid however the script ends. parallel reaches it
# through a wrapper (`--ssh`) that uses that key and port; the remote side runs the binary by its
# full path in BIN_DIR, as this machine is the remote one.
#
# Every recipe's output is compared byte for byte (cmp) with `batched`'s alone on the same input,
# each run bounded by LIMIT seconds; then all are timed with hyperfine beside the binary alone.
# Then a tally made in parts and merged: examples/count-by.rs by the status on the main job's logs,
# its jobs' `COUNT KEY` lines summed by `count-by --sum`, against `count-by 9` alone.
# Into the run's folder: beyond.json (hyperfine's) and beyond.md (the table, also printed), with
# sshd's log kept in the scratch folder.
#
# Needs GNU parallel, openssh-server and openssh-client, hyperfine and python3:
#   sudo apt-get install parallel openssh-server openssh-client hyperfine python3
# Sizes follow SIZE (harness/lib.sh): the text (2 MiB tiny, 32 MiB small, 256 MiB full), and the
# --pipe block, a sixteenth of it, so that every size makes jobs enough for -k to put in order.
# A smoke run: SIZE=tiny SCRATCH=target/smoke harness/beyond.sh

# shellcheck source=harness/lib.sh
source "$(dirname "$0")/lib.sh"

require parallel "sudo apt-get install parallel"
require /usr/sbin/sshd "sudo apt-get install openssh-server"
require ssh "sudo apt-get install openssh-client"
require ssh-keygen "sudo apt-get install openssh-client"
require python3 "sudo apt-get install python3"

# The longest any one recipe may run before the script stops with a failure.
LIMIT=$(by_size 120 300 900)

build batched gen-logs example:count-by
# gzipped TEXT: TEXT gzipped once for the zcat recipes, its path.
gzipped() {
    local gz=$WORK/$(basename "$1").gz
    if [[ ! -f $gz || $gz -ot $1 ]]; then
        say "compressing $(basename "$1") for the zcat recipes"
        gzip -1 -n -c "$1" > "$gz.tmp"
        mv "$gz.tmp" "$gz"
    fi
    printf '%s\n' "$gz"
}
text=$(text_file man) logs=$(text_file logs)
t=$(q "$text") g=$(q "$(gzipped "$text")") l=$(q "$logs") h=$(q "$(gzipped "$logs")")
block=$(($(stat -c %s "$text") / 16)) logs_block=$(($(stat -c %s "$logs") / 16))
batched=$(command_of "batched --threads 1")

# start_sshd: an sshd on a free port of 127.0.0.1 that takes this user's scratch key only, in
# the background (stopped at the script's end by its pid, through lib.sh's background); sets
# SSH_WRAPPER, an ssh that uses the key, the port and the known host key, and nothing of ~/.ssh.
start_sshd() {
    local dir=$WORK/beyond-sshd port user
    rm -rf "$dir"
    mkdir -p "$dir"
    user=$(id -un)
    ssh-keygen -q -t ed25519 -N '' -C beyond-host -f "$dir/host_key"
    ssh-keygen -q -t ed25519 -N '' -C beyond-user -f "$dir/user_key"
    cp "$dir/user_key.pub" "$dir/authorized_keys"
    # A port the kernel just gave out and took back: free, unless taken in the instant between.
    port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    printf '[127.0.0.1]:%s %s\n' "$port" "$(cut -d ' ' -f 1-2 "$dir/host_key.pub")" > "$dir/known_hosts"
    # StrictModes no: the scratch folder's modes are whatever the checkout's are. Root may log in
    # by key (CI runs as root); nobody else but this user may.
    cat > "$dir/sshd_config" << EOF
ListenAddress 127.0.0.1
HostKey $dir/host_key
AuthorizedKeysFile $dir/authorized_keys
AllowUsers $user
PermitRootLogin prohibit-password
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
PidFile none
MaxStartups 64
MaxSessions 64
EOF
    # sshd, run as root, wants its privilege separation folder, which Debian makes at boot.
    if [[ $(id -u) == 0 ]]; then mkdir -p /run/sshd; fi
    background /usr/sbin/sshd -D -e -f "$dir/sshd_config" -p "$port" 2> "$dir/sshd.log"
    SSHD=$!
    SSH_WRAPPER=$dir/ssh
    printf '#!/bin/sh\nexec ssh -F /dev/null -i %q -p %q -l %q -o IdentitiesOnly=yes -o BatchMode=yes -o UserKnownHostsFile=%q -o StrictHostKeyChecking=yes -o ConnectTimeout=10 -o ServerAliveInterval=5 -o ServerAliveCountMax=3 -o LogLevel=ERROR "$@"\n' \
        "$dir/user_key" "$port" "$user" "$dir/known_hosts" > "$SSH_WRAPPER"
    chmod +x "$SSH_WRAPPER"
    local tries
    for ((tries = 0; tries < 50; tries++)); do
        "$SSH_WRAPPER" 127.0.0.1 true 2> /dev/null && break
        kill -0 "$SSHD" 2> /dev/null || die "sshd stopped: $(tail -n 5 "$dir/sshd.log")"
        sleep 0.2
    done
    ((tries < 50)) || die "no ssh login to 127.0.0.1:$port in 10 s: $(tail -n 5 "$dir/sshd.log")"
    say "sshd $SSHD on 127.0.0.1:$port, logins with the scratch key only"
}
start_sshd
ssh_opt="--ssh $(q "$SSH_WRAPPER")"

# Each recipe of docs/BEYOND.md as run here (hosts: 127.0.0.1 through the wrapper; the remote
# binary by its path), after the binary alone on the same input, the first of each pair.
labels=(
    "batched F"
    "parallel --pipepart -a F --block -1 -k"
    "zcat G | batched"
    "zcat G | parallel --pipe -k"
    "zcat G | parallel --pipe -k -S :,127.0.0.1"
    "zcat G | parallel --pipe -k -S 127.0.0.1"
)
commands=(
    "$(command_of batched) $t"
    "parallel --pipepart -a $t --block -1 -k $batched"
    "zcat $g | $(command_of batched)"
    "zcat $g | parallel --pipe --block $block -k $batched"
    "zcat $g | parallel --pipe --block $block -k $ssh_opt -S :,127.0.0.1 $batched"
    "zcat $g | parallel --pipe --block $block -k $ssh_opt -S 127.0.0.1 $batched"
)
# A tally's parts made by the jobs and merged by `count-by --sum` (docs/CONTRACT.md §13.4), on the
# logs, against `count-by 9 L` alone.
count_by=$(q "$BIN_DIR/examples/count-by")
tally_labels=(
    "count-by 9 L"
    "parallel --pipepart -a L --block -1 -k count-by 9 | count-by --sum"
    "zcat H | parallel --pipe -k count-by 9 | count-by --sum"
    "zcat H | parallel --pipe -k -S :,127.0.0.1 count-by 9 | count-by --sum"
)
tally_commands=(
    "$count_by 9 $l"
    "parallel --pipepart -a $l --block -1 -k $count_by 9 | $count_by --sum"
    "zcat $h | parallel --pipe --block $logs_block -k $count_by 9 | $count_by --sum"
    "zcat $h | parallel --pipe --block $logs_block -k $ssh_opt -S :,127.0.0.1 $count_by 9 | $count_by --sum"
)

# checked NAME LABEL... -- COMMAND...: each command's output byte for byte the first's, each run
# bounded (a recipe that hangs or differs stops the script); then all timed, as RUN_DIR/NAME.json,
# whose path it prints.
checked() {
    local name=$1 labels=() commands=() outputs=$WORK/beyond-outputs timed=() i
    shift
    while [[ $1 != -- ]]; do labels+=("$1") && shift; done
    shift
    commands=("$@")
    mkdir -p "$outputs"
    for i in "${!labels[@]}"; do
        say "checking ${labels[$i]}"
        timeout -k 5 "$LIMIT" bash -c "${commands[$i]}" > "$outputs/$i.out" ||
            die "'${labels[$i]}' failed or ran past $LIMIT s: ${commands[$i]}"
        cmp "$outputs/0.out" "$outputs/$i.out" ||
            die "OUTPUT MISMATCH: '${labels[$i]}' differs from '${labels[0]}'"
    done
    rm -rf "$outputs"
    for i in "${!labels[@]}"; do timed+=("${labels[$i]}" "${commands[$i]}"); done
    time_commands "$name" "${timed[@]}"
}
json=$(checked beyond "${labels[@]}" -- "${commands[@]}")
tally_json=$(checked beyond-tallies "${tally_labels[@]}" -- "${tally_commands[@]}")

table=$RUN_DIR/beyond.md
{
    heading "docs/BEYOND.md's recipes, run through GNU parallel and an sshd on 127.0.0.1"
    echo
    echo "F: $(basename "$text") ($(stat -c %s "$text") bytes), G: it gzipped (gzip -1). Every"
    echo "recipe's output was byte for byte \`batched F\`'s (cmp). The parallel jobs run"
    echo "\`batched --threads 1\`, \`--pipe\` in blocks of $block bytes; \`-S 127.0.0.1\` reaches"
    echo "this machine through ssh (a key of the run's own, an sshd of its own on a free port),"
    echo "\`:\` runs here without ssh. User and system CPU are the local processes' only: the"
    echo "ssh side's (sshd, the jobs it starts) are not hyperfine's children."
    echo
    "$REPORT" table --bytes "$(stat -c %s "$text")" --reference "batched F" "$json"
    echo
    echo "## A tally made in parts and summed"
    echo
    echo "L: $(basename "$logs") ($(stat -c %s "$logs") bytes), H: it gzipped (gzip -1); \`--pipe\`"
    echo "blocks of $logs_block bytes. Every output was byte for byte \`count-by 9 L\`'s (cmp)."
    echo
    "$REPORT" table --bytes "$(stat -c %s "$logs")" --reference "count-by 9 L" "$tally_json"
    echo
    echo "## The texts"
    echo
    cat "$RUN_DIR/data.md"
} > "$table"
cat "$table"
say "wrote $table"
