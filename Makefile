# The few commands people run. Everything CI does is `make test`.
.PHONY: check test wasm site serve fuzz bench bench-fleet bench-paste docs pgo

check:            ## format, lint, unit + integration tests
	cargo fmt --all -- --check
	cargo clippy --all-targets --all-features -- -D warnings
	cargo test

test:             ## everything CI runs, installing what is missing
	./scripts/test.sh

wasm:             ## build pkg/ (wasm-bindgen + wasm-opt)
	bash scripts/build-wasm.sh

site: wasm        ## build site/: the page as a self-contained static directory
	bash scripts/build-site.sh site

serve: wasm       ## serve the page at http://127.0.0.1:8000/www/
	python3 -m http.server 8000 --bind 127.0.0.1

fuzz:             ## run every fuzz target for 60 s
	bash scripts/fuzz-smoke.sh 60

bench:            ## print throughput figures
	cargo bench --bench throughput

pgo:              ## profile-guided release build: target/pgo/release/fabricscope (~10 min)
	bash scripts/build-pgo.sh

bench-fleet:      ## analyze vs awk, peak RSS, files/s on generated 1,000- and 5,000-node fleets, PGO and plain builds; wasm/native ratio
	cargo build --release --quiet
	bash scripts/build-pgo.sh
	python3 scripts/bench-fleet.py --nodes 1000 5000 --archive --repeat 3 \
		--bin target/pgo/release/fabricscope --bin target/release/fabricscope
	bash scripts/bench-wasm.sh

bench-paste:      ## parse a generated 12 MB pdsh paste of `nvidia-smi nvlink -e` against awk (CPU, MB/s, peak RSS)
	cargo build --release --quiet
	python3 scripts/bench-paste.py --bin target/release/fabricscope

docs:             ## regenerate docs/rules.md from the rule registry
	UPDATE_DOCS=1 cargo test --lib docs_rules_md_is_up_to_date
