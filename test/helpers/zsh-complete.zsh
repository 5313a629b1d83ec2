# zsh -f zsh-complete.zsh SCRIPT LINE...
# Sources the completion SCRIPT in an interactive zsh on a pseudo-terminal (zpty), types each LINE
# and a Tab, and prints what the completion offered: one "<hit>WORD" a line, sorted, then "<end>".
zmodload zsh/zpty
local script=$1; shift
zpty z zsh -f -i
zpty -w z 'PS1=""; RPS1=""; tabs=0'
zpty -w z "autoload -U compinit; compinit -u -d ${(q)script}.zcompdump; source ${(q)script}"
# Every candidate passes through compadd: record it, then add it as usual.
zpty -w z 'compadd () { local -a __hits; builtin compadd -O __hits "$@"; print -rl -- $"\n" "<hit>"${^__hits[@]}; builtin compadd "$@" }'
# Tab completes, then says it has finished: nothing more is typed before that, since completion
# gives up early when it sees keys waiting.
zpty -w z 'tab-and-mark() { _main_complete; tabs=$((tabs + 1)); print -rn -- "<$tabs-tab-done>" }; zle -C tab-and-mark complete-word tab-and-mark; bindkey "^I" tab-and-mark'
zpty -w z 'zstyle ":completion:*" list-prompt ""; zstyle ":completion:*" menu no; LISTMAX=100000'

# Reads until the shell prints MARK; the caller's timeout ends a wait that never sees it.
read_until() {
  out=""
  zpty -r -m z out "*$1*"
}

local out n=0
# The mark is a sum, so that the echo of the typed line does not match.
zpty -w z 'print -r -- "<$((990 + 9))ready>"'
read_until '<999ready>' || exit 1
for line in "$@"; do
  n=$((n + 1))
  zpty -w -n z "$line"$'\t'
  read_until "<$n-tab-done>" || exit 1
  print -r -- "${out//$'\r'/}" | grep '^<hit>' | sort -u
  print -r -- '<end>'
  zpty -w -n z $'\C-u'
done
zpty -d z
