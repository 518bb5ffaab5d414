# Sourced by scripts that measure ranking quality on heddle's two judged sets:
#   scifact     SciFact's 5,183 documents and 300 test queries ($SCIFACT)
#   known-item  SciFact known-item: 1,000 sampled titles as queries, each judged relevant
#               to its own document, the documents without their titles
#               (scripts/known-item-set.py, seed 32), written under $1 by make_judged_sets
# Run from the repository's root, with SCIFACT set.

JUDGED_SETS="scifact known-item"

# Writes the known-item set under $1/known-item-data (the same files every time).
make_judged_sets() {
  python3 scripts/known-item-set.py "$SCIFACT" "$1/known-item-data" --count 1000 --seed 32
}

# Sets `data` (the set's BEIR directory), `qrels` and `remove` (the flags that drop a
# query's own document: SciFact's queries are ids of its corpus) for set $1 made under $2.
judged_set() {
  case $1 in
    scifact) data=$SCIFACT; remove=(--remove-query) ;;
    known-item) data=$2/known-item-data; remove=() ;;
    *) echo "judged_set: no set named $1" >&2; return 1 ;;
  esac
  qrels=$data/qrels/test.tsv
}
