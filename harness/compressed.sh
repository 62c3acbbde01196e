# shellcheck shell=bash
# throughput.sh's compressed section (issue 23), sourced by it: what the headline pipe
# `zcat F.gz | X` costs, against `X -z`, which decodes in process on a thread of its own. On the
# first lines of the logs and of the man page sources, as many bytes as each format's decoder
# takes a few hundred milliseconds on (COMPRESSED_SHARE: the decoders' and the pipe's costs scale
# with the bytes, and the whole texts made this section three quarters of the main job): a quarter
# of the texts (COMPRESSED_BYTES, 64 MiB at full size) compressed with `gzip -6` and with
# `zstd -3`, every
# variant but `pipeline --batch 1` (the slowest per line, a line a message: its cost per line is
# the main tables' and sweep.sh's, and every binary is still here, pipeline at --batch 1000):
#   `zcat F.gz | X`, `pigz -dc F.gz | X`, `igzip -dc F.gz | X` (ISA-L's, the fastest inflate),
#   `X -z F.gz`; `zstd -dc F.zst | X`, `X -z F.zst`;
#   each decoder alone to /dev/null as the reference: zcat, pigz, igzip, zstd, and tools' `decode`,
#   the decoders the binaries decode with, in the same pieces, alone: the floor of `X -z`;
# the other formats for `batched` alone, beside each tool's own decoder (`pzstd`'s files, a
# skippable frame before each frame; `xz -T1`; `xz -T2`, whose blocks `-z` decodes on every core,
# beside `xz -dc -T1` and `-T2`; `bzip2 -9`; `lz4`): `TOOL -dc F`,
# `TOOL -dc F | batched`, `batched -z F`; bzip2 files made by `bzip2 -9`, and on the man text by
# `lbzip2` and `pbzip2`,
# whose blocks `-z` decodes on every core (CONTRACT §12.4), each beside `bzip2 -dc`, `lbzip2 -dc`
# and `pbzip2 -dc` into `batched`, and `batched -z` from the FILE, from stdin and with one decoder;
# eight rotated gzip files (the text `split -n l/8` at line ends, as logrotate cuts a log, each
# part `gzip -6`), for `batched` alone: `batched -z F.0*.gz` (the next FILEs decoded ahead, CONTRACT
# §12.5) and with `--decoders 1`, beside the same bytes as one member, `batched -z F.gz`, and
# `parallel -k -jCORES pigz -dc ::: F.0*.gz | batched`, the tools' way to decode on every core;
# a thousand small gzip FILEs (the man text's first COMPRESSED_BYTES / 8 cut in 1,000 at line
# ends, each `gzip -6`, as a directory of rotated or per-request logs is): `batched -z` and
# `std-baseline -z` on them, beside `zcat` and `igzip -dc` on them, and `batched` on the same
# FILEs uncompressed (CONTRACT §12.5's small FILEs, decoded whole on one thread beside the reader);
# and the peak RSS of `batched -z` on a gzip file of short lines (1 GB decoded at full size).
# Every output is checked identical first. Appends its tables to the file named by $1.
#
# Needs gzip, pigz, igzip, zstd (pzstd), xz, bzip2, lbzip2, pbzip2, lz4, GNU parallel and
# /usr/bin/time: sudo apt-get install gzip pigz isal zstd xz-utils bzip2 lbzip2 pbzip2 lz4 parallel time

COMPRESSED_BYTES=$((TEXT_BYTES / 4))
# Each format's text, the first COMPRESSED_BYTES / SHARE of the logs or the man pages: sized by
# its decoder's speed, so that every row takes a few hundred milliseconds and the slow decoders
# do not take the section's time (on the project's 2 cores, a quiet Xeon: zcat decodes 64 MiB of
# logs in about 0.3 s and zstd, lz4 faster; bzip2 -dc decodes about 40 MB/s, where 64 MiB took
# 3.6-5.4 s a run; xz's decoding is quick but `xz -6` compresses at about 3 MB/s, which made the
# xz files most of the section's time).
declare -A COMPRESSED_SHARE=([gzip]=1 [zstd]=1 [pzstd]=1 [lz4]=1 [xz]=4 [xz-T2]=4 [bzip2]=8 [lbzip2]=8
    [pbzip2]=8)
# Each format: its file's extension, and the command that makes it.
# xz-T2: `xz -T2`'s blocks, which `-z` decodes on every core (CONTRACT §12.4). `xz -6 -T2` cuts
# 24 MiB blocks, more than its text holds: four blocks a file, as a bigger file has.
declare -A COMPRESSED_EXTENSION=([gzip]=gz [zstd]=zst [pzstd]=pzst [xz]=xz [xz-T2]=T2.xz [bzip2]=bz2
    [lbzip2]=lbz2.bz2 [pbzip2]=pbz2.bz2 [lz4]=lz4)
declare -A COMPRESSOR=([gzip]="gzip -6 -n -c" [zstd]="zstd -3 -q -c" [pzstd]="pzstd -3 -p 2 -q -c"
    [xz]="xz -6 -T1 -c" [xz-T2]="xz -6 -T2 --block-size=$((COMPRESSED_BYTES / COMPRESSED_SHARE[xz-T2] / 4)) -c"
    [bzip2]="bzip2 -9 -c" [lbzip2]="lbzip2 -9 -n 2 -c" [pbzip2]="pbzip2 -9 -p2 -c" [lz4]="lz4 -q -c")

# compressed_of FILE FORMAT: FILE compressed as FORMAT's COMPRESSOR makes it, beside FILE with
# FORMAT's extension, made the first time; its path. targets.sh's `-z` target takes its gzip file
# from here too, so that both measure the same bytes.
compressed_of() {
    local compressed=$1.${COMPRESSED_EXTENSION[$2]}
    [[ -f $compressed ]] || ${COMPRESSOR[$2]} "$1" > "$compressed"
    printf '%s\n' "$compressed"
}

# mib BYTES: BYTES in MiB, or in KiB below a MiB (tiny runs).
mib() { if (($1 >> 20)); then echo "$(($1 >> 20)) MiB"; else echo "$(($1 >> 10)) KiB"; fi; }

# compressed_section TABLE: times the compressed pipes and appends the tables to TABLE.
compressed_section() {
    local table=$1 text file gz zst compressed labels=() commands=() variant cmd i json
    require pigz "sudo apt-get install pigz"
    require igzip "sudo apt-get install isal"
    require zstd "sudo apt-get install zstd"
    require pzstd "sudo apt-get install zstd"
    require xz "sudo apt-get install xz-utils"
    require bzip2 "sudo apt-get install bzip2"
    require lbzip2 "sudo apt-get install lbzip2"
    require pbzip2 "sudo apt-get install pbzip2"
    require lz4 "sudo apt-get install lz4"
    require parallel "sudo apt-get install parallel"
    require /usr/bin/time "sudo apt-get install time"
    for text in logs man; do
        for format in gzip zstd pzstd xz xz-T2 bzip2 lbzip2 pbzip2 lz4; do
            # The other tools' bzip2 files on the man text alone: their blocks differ from
            # `bzip2 -9`'s in where they are cut, not in what they hold, and the main job's time
            # is a newcomer's wait.
            [[ $text == man || $format != [lp]bzip2 ]] || continue
            file=$(text_file "$text" $((COMPRESSED_BYTES / COMPRESSED_SHARE[$format])))
            gz=$file.gz zst=$file.zst
            compressed=$(compressed_of "$file" "$format")
            labels=() commands=()
            case $format in
                gzip)
                    labels+=("decode (the binaries' gzip reader) alone" "zcat alone" "pigz -dc alone"
                        "igzip -dc alone")
                    commands+=("$(q "$BIN_DIR/decode") $(q "$gz")" "zcat $(q "$gz")" "pigz -dc $(q "$gz")"
                        "igzip -dc $(q "$gz")")
                    ;;
                zstd)
                    labels+=("decode (zstd crate) alone" "zstd -dc alone")
                    commands+=("$(q "$BIN_DIR/decode") $(q "$zst")" "zstd -dc $(q "$zst")")
                    ;;
                xz-T2)
                    labels+=("xz -dc -T2 alone")
                    commands+=("xz -q -dc -T2 $(q "$compressed")")
                    ;;
                *)
                    labels+=("$format -dc alone")
                    commands+=("$format -q -dc $(q "$compressed")")
                    ;;
            esac
            local checks=()
            while read -r variant; do
                [[ $variant != "pipeline --batch 1" ]] || continue
                cmd=$(command_of "$variant")
                case $format in
                    gzip)
                        labels+=("zcat F.gz | $variant" "pigz -dc F.gz | $variant" "igzip -dc F.gz | $variant"
                            "$variant -z F.gz")
                        commands+=("zcat $(q "$gz") | $cmd" "pigz -dc $(q "$gz") | $cmd"
                            "igzip -dc $(q "$gz") | $cmd" "$cmd -z $(q "$gz")")
                        ;;
                    zstd)
                        labels+=("zstd -dc F.zst | $variant" "$variant -z F.zst")
                        commands+=("zstd -dc $(q "$zst") | $cmd" "$cmd -z $(q "$zst")")
                        ;;
                    xz-T2)
                        [[ $variant == batched ]] || continue
                        labels+=("xz -dc -T1 F | $variant" "xz -dc -T2 F | $variant" "$variant -z F")
                        commands+=("xz -q -dc -T1 $(q "$compressed") | $cmd" \
                            "xz -q -dc -T2 $(q "$compressed") | $cmd" "$cmd -z $(q "$compressed")")
                        ;;
                    bzip2 | lbzip2 | pbzip2)
                        # A file of every bzip2 tool, beside every tool's decoder: the blocks on
                        # every core, from the FILE and from stdin, and on one decoder.
                        [[ $variant == batched ]] || continue
                        for tool in bzip2 lbzip2 pbzip2; do
                            labels+=("$tool -dc F | $variant")
                            commands+=("$tool -q -dc $(q "$compressed") | $cmd")
                        done
                        labels+=("$variant -z < F" "$variant -z --decoders 1 F" "$variant -z F")
                        commands+=("$cmd -z < $(q "$compressed")" "$cmd -z --decoders 1 $(q "$compressed")"
                            "$cmd -z $(q "$compressed")")
                        checks+=("${commands[@]: -6:4}")
                        ;;
                    *)
                        # The other formats' cost is their decoder's: one binary shows it.
                        [[ $variant == batched ]] || continue
                        labels+=("$format -dc F | $variant" "$variant -z F")
                        commands+=("$format -q -dc $(q "$compressed") | $cmd" "$cmd -z $(q "$compressed")")
                        ;;
                esac
                checks+=("${commands[@]: -1}" "${commands[@]: -2:1}")
            done < <(variants)
            same_output "$(basename "$file") ($format)" "${checks[@]}"
            local timed=()
            for i in "${!labels[@]}"; do timed+=("${labels[$i]}" "${commands[$i]}"); done
            json=$(time_commands "compressed-$text-$format" "${timed[@]}")
            {
                echo
                echo "## $(basename "$file"), $format: the decoders alone, \`DECODER F | X\` and \`X -z F\`"
                echo
                echo "F is $(basename "$file"), the first $(mib "$(stat -c %s "$file")") of the $text text" \
                    "(1/$((4 * COMPRESSED_SHARE[$format])) of the texts above, sized by its decoder's speed)," \
                    "compressed with \`${COMPRESSOR[$format]}\`" \
                    "($(stat -c %s "$compressed") bytes); MiB/s counts decoded bytes." \
                    "\`pipeline --batch 1\` is left out here: the tables above have its per-line cost."
                echo
                "$REPORT" table --bytes "$(stat -c %s "$file")" --reference "${labels[0]}" "$json"
            } >> "$table"
        done
        compressed_rotated "$(text_file "$text" "$COMPRESSED_BYTES")" "$RUN_DIR/compressed-$text-gzip.json" \
            >> "$table"
    done
    compressed_small "$(text_file man $((COMPRESSED_BYTES / 8)))" >> "$table"
    compressed_memory >> "$table"
}

# compressed_small FILE: FILE cut into a thousand small gzip FILEs, `batched -z` and
# `std-baseline -z` on them beside `zcat` and `igzip -dc`, as a markdown section.
compressed_small() {
    local file=$1 parts labels commands timed=() i json
    parts=$file.small
    if [[ ! -f $parts/done ]]; then
        rm -rf "$parts" && mkdir -p "$parts"
        split -a 3 -d -n l/1000 "$file" "$parts/part."
        for part in "$parts"/part.*; do cp "$part" "$part.txt" && ${COMPRESSOR[gzip]} "$part" > "$part.gz" && rm "$part"; done
        touch "$parts/done"
    fi
    labels=("zcat F.*.gz" "igzip -dc F.*.gz" "batched -z F.*.gz" "std-baseline -z F.*.gz"
        "batched F.* (the same FILEs, not compressed)")
    commands=("zcat $(q "$parts")/part.*.gz" "igzip -dc $(q "$parts")/part.*.gz"
        "$(command_of batched) -z $(q "$parts")/part.*.gz" "$(command_of std-baseline) -z $(q "$parts")/part.*.gz"
        "$(command_of batched) $(q "$parts")/part.*.txt")
    same_output "$(basename "$file") (1,000 gzip files)" "${commands[@]:2}" "zcat $(q "$parts")/part.*.gz | $(command_of batched)"
    for i in "${!labels[@]}"; do timed+=("${labels[$i]}" "${commands[$i]}"); done
    json=$(time_commands "compressed-$(basename "$file")-small" "${timed[@]}")
    echo
    echo "## $(basename "$file") as a thousand small gzip FILEs: \`batched -z F.*.gz\`"
    echo
    echo "F.000.gz to F.999.gz are $(basename "$file") ($(mib "$(stat -c %s "$file")")) cut by \`split -n l/1000\`" \
        "at line ends, each compressed with \`${COMPRESSOR[gzip]}\` (about $(($(stat -c %s "$file") / 1000)) bytes" \
        "decoded each): what a FILE costs beyond its bytes. \`-z\` decodes FILEs this small whole, ahead of" \
        "their turns on one thread beside the reader (CONTRACT §12.5)."
    echo
    "$REPORT" table --bytes "$(stat -c %s "$file")" --reference "zcat F.*.gz" "$json"
}

# compressed_rotated FILE GZIP-JSON: `batched -z` on FILE cut into eight rotated gzip files, against
# FILE as one gzip member (made by compressed_section, `batched -z F.gz` timed in its table,
# GZIP-JSON) and `parallel … pigz -dc … | batched`, as a markdown section.
compressed_rotated() {
    local file=$1 one_member=$2 parts cores cmd json labels commands part
    parts=$file.rotated
    if [[ ! -f $parts/part.07.gz ]]; then
        rm -rf "$parts" && mkdir -p "$parts"
        split -d -n l/8 "$file" "$parts/part."
        for part in "$parts"/part.0?; do ${COMPRESSOR[gzip]} "$part" > "$part.gz" && rm "$part"; done
    fi
    cores=$(nproc)
    cmd=$(command_of batched)
    labels=("batched -z F.0{0..7}.gz" "batched -z --decoders 1 F.0{0..7}.gz"
        "parallel -k -j$cores pigz -dc ::: F.0*.gz | batched")
    commands=("$cmd -z $(q "$parts")/part.0?.gz" "$cmd -z --decoders 1 $(q "$parts")/part.0?.gz"
        "parallel -k -j$cores pigz -dc ::: $(q "$parts")/part.0?.gz | $cmd")
    same_output "$(basename "$file") (8 rotated gzip files)" "$cmd -z $(q "$file.gz")" "${commands[@]}"
    local timed=() i
    for i in "${!labels[@]}"; do timed+=("${labels[$i]}" "${commands[$i]}"); done
    json=$(time_commands "compressed-$(basename "$file")-rotated" "${timed[@]}")
    echo
    echo "## $(basename "$file") as eight rotated gzip files: decoded ahead, \`batched -z F.0*.gz\`"
    echo
    echo "F.0{0..7}.gz are $(basename "$file") cut by \`split -n l/8\` at line ends, as logrotate cuts" \
        "a log, each compressed with \`${COMPRESSOR[gzip]}\`; F.gz is the same text as one member." \
        "\`batched -z\` decodes the next FILEs ahead on up to $cores threads (the cores), \`--decoders 1\`" \
        "one at a time (CONTRACT §12.5). The first row is the gzip table's, not timed again."
    echo
    "$REPORT" table --bytes "$(stat -c %s "$file")" --reference "batched -z F.gz" --reference-from "$one_member" \
        "$json"
}

# compressed_memory: the peak RSS of `batched -z` on one gzip file of short lines (16 bytes each),
# as a markdown section: memory is bounded by the settings, not the decoded size (CONTRACT §12.4).
compressed_memory() {
    local bytes gz kib
    bytes=$(($(by_size 16 256 1024) << 20))
    gz=$WORK/short-lines-$bytes.gz
    if [[ ! -f $gz ]]; then
        say "making $(basename "$gz")"
        { yes 'a b c d e f g' || true; } | head -c "$bytes" | gzip -1 -n > "$gz.tmp"
        mv "$gz.tmp" "$gz"
    fi
    kib=$(/usr/bin/time -f %M "$BIN_DIR/batched" -z "$gz" 2>&1 > /dev/null | tail -n 1)
    echo
    echo "## Peak RSS of \`batched -z\` on one gzip file that decodes to $((bytes >> 20)) MiB of 16-byte lines"
    echo
    echo "$((kib / 1024)) MiB (\`/usr/bin/time -f %M\`; the contract's bound at 1 GiB: 32 MiB)."
}
