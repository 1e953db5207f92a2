/// The console's style sheet, served as `/static/console.css` (no inline style: the
/// Content-Security-Policy allows only the console's own files).
enum ConsoleStyle {
    static let css = """
        :root { color-scheme: light dark; --line: #8884; --muted: #888; --ok: #1a7f37; --bad: #cf222e; --warn: #9a6700; }
        * { box-sizing: border-box; }
        body { margin: 0; font: 14px/1.45 system-ui, sans-serif; }
        header#top { display: flex; gap: 1.5em; align-items: center; padding: .6em 1em; border-bottom: 1px solid var(--line); flex-wrap: wrap; }
        .brand { font-weight: 600; }
        nav#nav a { margin-right: 1em; text-decoration: none; }
        nav#nav a[aria-current=page] { font-weight: 600; text-decoration: underline; }
        #who { margin-left: auto; }
        main#main { padding: 1em; max-width: 110em; }
        h1 { font-size: 1.3em; margin: .2em 0 .6em; }
        h2 { font-size: 1.1em; margin: 1.2em 0 .4em; }
        table { border-collapse: collapse; width: 100%; }
        th, td { text-align: left; padding: .25em .6em; border-bottom: 1px solid var(--line); vertical-align: top; }
        th { font-weight: 600; white-space: nowrap; }
        td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
        code, pre, .mono { font-family: ui-monospace, monospace; font-size: 13px; }
        pre { white-space: pre-wrap; word-break: break-all; margin: 0; }
        dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .2em 1em; }
        dl.facts dt { color: var(--muted); }
        dl.facts dd { margin: 0; }
        .status-succeeded { color: var(--ok); }
        .status-failed, .status-interrupted { color: var(--bad); }
        .status-stopped, .status-skipped, .status-missed { color: var(--warn); }
        .status-running, .status-queued, .status-fired { font-weight: 600; }
        form.inline { display: inline; }
        form.filters { display: flex; gap: .6em; flex-wrap: wrap; align-items: end; margin-bottom: 1em; }
        form.filters label { display: flex; flex-direction: column; font-size: 12px; color: var(--muted); }
        .pager { margin: 1em 0; display: flex; gap: 1em; }
        .notice { padding: .5em .8em; border: 1px solid var(--line); border-radius: 4px; margin-bottom: 1em; }
        .problem h1 { color: var(--bad); }
        .muted { color: var(--muted); }
        #live-state[data-live=on]::before { content: "● live "; color: var(--ok); }
        """
}
