#!/usr/bin/env bash
# Extract, merge and compile the message catalogs (run from the repository root: tox -e catalogs).
# A new message lands in each language's .po with an empty msgstr: translate it, then run this
# again to compile. grader/tests/test_messages.py fails while any message is untranslated, and
# while a compiled catalog differs from its .po.
#
# update.sh DIR: only extract the templates (.pot) into DIR (the self-check compares them).
set -euo pipefail
POT_DIR=${1:-grader/locale}
# _(), ngettext() and N_() in the code and templates; a Translator's gettext()/ngettext();
# Message("...") keeps a message for later (grader.core.i18n).
KEYWORDS=(--no-default-keywords -k _ -k N_ -k ngettext:1,2 -k gettext -k Message:1)
for domain in torchdrill reports; do
  cfg=babel-messages.cfg
  [ "$domain" = reports ] && cfg=babel-reports.cfg
  fresh=$(mktemp)
  pybabel extract -F "$cfg" "${KEYWORDS[@]}" --sort-by-file --no-location --project torchdrill \
    --copyright-holder "the torchdrill authors" -o "$fresh" . > /dev/null 2>&1
  # the same messages: the template (and so every catalog) stays as it is, its date included
  if [ -f "$POT_DIR/$domain.pot" ] && cmp -s <(grep -v '^"POT-Creation-Date' "$fresh") \
       <(grep -v '^"POT-Creation-Date' "$POT_DIR/$domain.pot"); then
    rm "$fresh"
  else
    mv "$fresh" "$POT_DIR/$domain.pot"
  fi
  [ $# -gt 0 ] && continue
  pybabel update --init-missing --no-fuzzy-matching --ignore-obsolete -D "$domain" \
    -i "grader/locale/$domain.pot" -d grader/locale -l zh_CN > /dev/null
  pybabel compile -D "$domain" -d grader/locale --statistics
done
