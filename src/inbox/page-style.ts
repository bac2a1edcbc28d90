/** The page's stylesheet, served inline under the page's CSP nonce. */
export const PAGE_STYLE = String.raw`
:root { color-scheme: light dark; --bg: #f6f7f9; --card: #fff; --fg: #1b1f24; --muted: #5b6470; --line: #d9dde3;
  --accent: #1f6feb; --ok: #1a7f37; --bad: #cf222e; --warn: #9a6700; font-family: system-ui, -apple-system, "Segoe UI", sans-serif; }
@media (prefers-color-scheme: dark) { :root { --bg: #0d1117; --card: #161b22; --fg: #e6edf3; --muted: #8d96a0; --line: #30363d; } }
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--fg); font-size: 14px; line-height: 1.45; }
header { display: flex; flex-wrap: wrap; gap: 12px; align-items: center; padding: 12px 20px; border-bottom: 1px solid var(--line); background: var(--card); }
header h1 { font-size: 18px; margin: 0 12px 0 0; }
.who { margin-left: auto; color: var(--muted); }
.live { font-size: 12px; padding: 2px 8px; border-radius: 10px; border: 1px solid var(--line); color: var(--muted); }
.live.on { color: var(--ok); border-color: var(--ok); }
nav { display: flex; gap: 6px; }
nav button.active { background: var(--accent); color: #fff; border-color: var(--accent); }
.filters { display: flex; gap: 8px; flex-wrap: wrap; padding: 10px 20px; align-items: center; }
main { padding: 0 20px 30px; max-width: 1100px; }
button, select, input, textarea { font: inherit; color: inherit; background: var(--card); border: 1px solid var(--line); border-radius: 6px; padding: 5px 10px; }
button { cursor: pointer; }
button.approve { background: var(--ok); border-color: var(--ok); color: #fff; }
button.decline { background: var(--bad); border-color: var(--bad); color: #fff; }
button:disabled { opacity: .5; cursor: default; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 14px 16px; margin: 12px 0; }
.card h2 { font-size: 15px; margin: 0 0 6px; }
.meta { color: var(--muted); font-size: 12px; display: flex; flex-wrap: wrap; gap: 4px 14px; }
.badge { display: inline-block; font-size: 11px; font-weight: 600; text-transform: uppercase; padding: 1px 7px; border-radius: 10px; border: 1px solid var(--line); margin-right: 6px; }
.badge.approval { color: var(--accent); border-color: var(--accent); }
.badge.input, .badge.question { color: var(--warn); border-color: var(--warn); }
.prompt { font-size: 15px; margin: 8px 0; }
pre { background: var(--bg); border: 1px solid var(--line); border-radius: 6px; padding: 8px; overflow: auto; font-size: 12px; margin: 6px 0; }
.actions { display: flex; flex-wrap: wrap; gap: 8px; align-items: flex-start; margin-top: 10px; }
.actions textarea { min-width: 260px; min-height: 34px; }
form[data-testid=input-form] { display: flex; flex-wrap: wrap; gap: 4px 14px; align-items: flex-end; }
.field { display: flex; flex-direction: column; gap: 3px; margin: 6px 0; }
.field .req { color: var(--bad); }
.field input[type=checkbox] { align-self: flex-start; }
.field .hint { color: var(--muted); font-size: 12px; }
.field .problem, .error { color: var(--bad); font-size: 12px; }
.expiry.soon { color: var(--warn); font-weight: 600; }
.expiry.gone { color: var(--bad); font-weight: 600; }
table { width: 100%; border-collapse: collapse; background: var(--card); border: 1px solid var(--line); border-radius: 8px; margin-top: 12px; }
th, td { text-align: left; padding: 7px 10px; border-bottom: 1px solid var(--line); vertical-align: top; }
th { font-size: 12px; color: var(--muted); font-weight: 600; }
.status-resolved { color: var(--ok); } .status-declined, .status-cancelled, .status-expired { color: var(--bad); }
.empty { color: var(--muted); padding: 20px 0; }
a { color: var(--accent); }
.signin { max-width: 380px; margin: 80px auto; }
.outcome { margin: 12px 20px; max-width: 1060px; border-color: var(--accent); }
.outcome[hidden] { display: none; }
.filters[hidden] { display: none; }
.signatures { margin: 4px 0; padding-left: 18px; color: var(--muted); font-size: 12px; }
.escalated { color: var(--warn); font-weight: 600; }
details.edit { flex-basis: 100%; }
details.edit summary { cursor: pointer; color: var(--accent); }
form[data-testid=edit-form] { display: flex; flex-wrap: wrap; gap: 4px 14px; align-items: flex-end; }
`;
