/// The completion scripts of `hubscript completion bash|zsh|fish`. Each asks the
/// binary at every Tab (`hubscript __complete WORD…`, `CompleteCommand`), so profiles,
/// jobs, run ids, library recipes and a recipe's parameters are those of the moment,
/// and then adds the files the answer's first line asks for (`:all`, `:lua`,
/// `:directories`; `:none` for none). The binary run is the one typed on the command
/// line (`hubscript`, `./hubscript`, `~/bin/hubscript`).
enum CompletionScripts {
    /// bash 4+. The words come from `COMP_LINE` up to the cursor (split at blanks, as
    /// the user wrote them), not from `COMP_WORDS`, which bash splits at `:` and `=`
    /// (`ops:offboard`, `--param days=`); the candidates then lose the part before the
    /// last `:` or `=`, since bash replaces only the part after it. Quotes on the line
    /// are not interpreted: a quoted word holding a blank completes as two words. Names
    /// (`:none`) are inserted quoted (`printf %q`), files by bash's own filename quoting,
    /// so a profile, job or run id holding `;` or `$(…)` runs nothing when accepted.
    static let bash = #"""
    # bash completion for hubscript (hubscript completion bash)
    _hubscript() {
      local prog="${COMP_WORDS[0]/#\~/$HOME}" cur pre="" directive candidate
      local -a words lines
      if [[ -n "${COMP_LINE-}" ]]; then
        local line="${COMP_LINE:0:COMP_POINT}"
        read -r -a words <<< "$line"
        [[ "$line" =~ [[:space:]]$ ]] && words+=("")
      else
        words=("${COMP_WORDS[@]:0:COMP_CWORD+1}")
      fi
      [[ ${#words[@]} -lt 2 ]] && words+=("")
      cur="${words[${#words[@]}-1]}"
      mapfile -t lines < <("$prog" __complete "${words[@]:1}" 2>/dev/null)
      directive="${lines[0]-}"
      COMPREPLY=()
      if [[ "$cur" == *[:=]* ]]; then pre="${cur%"${cur##*[:=]}"}"; fi
      for candidate in "${lines[@]:1}"; do
        candidate="${candidate#"$pre"}"
        # Without -o filenames bash inserts a candidate as it is: quote it, so a name holding
        # `;`, `$(…)` or a blank stays one word and runs nothing.
        [[ "$directive" == :none ]] && printf -v candidate '%q' "$candidate"
        COMPREPLY+=("$candidate")
      done
      case "$directive" in
        :all) mapfile -t -O "${#COMPREPLY[@]}" COMPREPLY < <(compgen -f -- "$cur") ;;
        :lua) mapfile -t -O "${#COMPREPLY[@]}" COMPREPLY < <(compgen -d -- "$cur"; compgen -f -X '!*.lua' -- "$cur") ;;
        :directories) mapfile -t -O "${#COMPREPLY[@]}" COMPREPLY < <(compgen -d -- "$cur") ;;
      esac
      # Names that are not files are inserted as they are (no `\=`), and `NAME=` waits for its value.
      [[ "$directive" == :none ]] && compopt +o filenames 2>/dev/null
      if [[ ${#COMPREPLY[@]} -eq 1 && "${COMPREPLY[0]}" == *= ]]; then compopt -o nospace 2>/dev/null; fi
      return 0
    }
    complete -o filenames -F _hubscript hubscript

    """#

    /// zsh, native (compsys): `_hubscript` hands the words to `__hubscript_complete`,
    /// which adds the candidates (`NAME=` without a space after it) and the files.
    static let zsh = #"""
    #compdef hubscript
    # zsh completion for hubscript (hubscript completion zsh)
    __hubscript_complete() {
      local prog=${1/#\~/$HOME}; shift
      local -a lines candidates assignments
      lines=("${(@f)$("$prog" __complete "$@" 2>/dev/null)}")
      local directive=${lines[1]}
      local candidate
      for candidate in "${(@)lines[2,-1]}"; do
        [[ -z $candidate ]] && continue
        if [[ $candidate == *= ]]; then assignments+=("$candidate"); else candidates+=("$candidate"); fi
      done
      (( ${#candidates} )) && compadd -- "${candidates[@]}"
      (( ${#assignments} )) && compadd -S '' -- "${assignments[@]}"
      case $directive in
        :all) _files ;;
        :lua) _files -g '*.lua' ;;
        :directories) _files -/ ;;
      esac
      return 0
    }
    _hubscript() { __hubscript_complete "${words[1]}" "${(@)words[2,CURRENT]}" }
    (( $+functions[compdef] )) || { autoload -U +X compinit && compinit }
    compdef _hubscript hubscript

    """#

    /// fish 3: the candidates of `__hubscript_complete`, then the files the answer asks
    /// for, listed by `__hubscript_files` (a folder with a `/`, so fish walks into it).
    static let fish = #"""
    # fish completion for hubscript (hubscript completion fish)
    function __hubscript_files --argument-names current kind
        eval "for path in "(string escape -- "$current")"*; echo \$path; end" | while read -l path
            if test -d "$path"
                echo "$path/"
            else if test "$kind" = all; or string match -q -- '*.lua' "$path"
                echo "$path"
            end
        end
    end
    function __hubscript_complete
        set -l tokens (commandline -opc)
        set -l prog (string replace -r '^~' -- $HOME $tokens[1])
        set -e tokens[1]
        set -l current (commandline -ct)
        set -l lines (command $prog __complete $tokens "$current" 2>/dev/null)
        test (count $lines) -ge 1; or return 0
        set -l directive $lines[1]
        set -e lines[1]
        for candidate in $lines
            echo $candidate
        end
        switch $directive
            case :all
                __hubscript_files "$current" all
            case :lua
                __hubscript_files "$current" lua
            case :directories
                __hubscript_files "$current" directories | string match -- '*/'
        end
    end
    complete -c hubscript -f -a '(__hubscript_complete)'

    """#
}
