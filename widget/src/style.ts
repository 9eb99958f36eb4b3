// The widget's CSS, scoped by its shadow root. Colours come from resolveAppearance (validated #rrggbb).
import type { Appearance } from './lib'

export const css = (a: Appearance) => `
:host{all:initial}
:host *{box-sizing:border-box;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
.launcher,.panel{position:fixed;bottom:20px;z-index:2147483000}
:host(.bottom-right) .launcher,:host(.bottom-right) .panel{right:20px}
:host(.bottom-left) .launcher,:host(.bottom-left) .panel{left:20px}
.launcher{border:0;border-radius:24px;padding:12px 20px;background:${a.primary_color};color:#fff;font-weight:600;cursor:pointer;box-shadow:0 4px 14px rgba(0,0,0,.2)}
.launcher:focus-visible,button:focus-visible,textarea:focus-visible,a:focus-visible{outline:3px solid ${a.primary_color};outline-offset:2px}
.launcher[aria-expanded=true]{display:none}
.panel{display:flex;flex-direction:column;width:min(370px,calc(100vw - 40px));height:min(560px,calc(100vh - 40px));background:var(--bg);color:var(--fg);border-radius:14px;box-shadow:0 10px 40px rgba(0,0,0,.25);overflow:hidden}
.panel[hidden]{display:none}
.header{display:flex;align-items:center;gap:10px;padding:12px 14px;background:${a.primary_color};color:#fff}
.avatar{width:28px;height:28px;border-radius:50%;object-fit:cover}
.avatar[hidden]{display:none}
h2{flex:1;margin:0;font-size:16px;font-weight:600;color:#fff}
.close{border:0;background:transparent;color:#fff;font-size:22px;line-height:1;cursor:pointer;padding:2px 8px;border-radius:6px}
.log{flex:1;overflow-y:auto;padding:14px;display:flex;flex-direction:column;gap:8px}
.msg{margin:0;padding:8px 12px;border-radius:12px;max-width:85%;white-space:pre-wrap;overflow-wrap:anywhere}
.msg.agent{background:var(--muted);align-self:flex-start}
.msg.user{background:${a.primary_color};color:#fff;align-self:flex-end}
.msg.error{background:#fde8e8;color:#9b1c1c;align-self:stretch;max-width:none}
.msg a{color:inherit;text-decoration:underline}
.status{min-height:0;padding:0 14px;font-size:12px;color:var(--dim)}
.composer{display:flex;gap:8px;padding:10px;border-top:1px solid var(--muted)}
textarea{flex:1;resize:none;border:1px solid var(--line);border-radius:8px;padding:8px;background:var(--bg);color:var(--fg);max-height:120px}
.send{border:0;border-radius:8px;padding:0 14px;background:${a.primary_color};color:#fff;font-weight:600;cursor:pointer}
.send:disabled{opacity:.6;cursor:default}
.mic{display:flex;align-items:center;border:1px solid var(--line);border-radius:8px;padding:0 9px;background:var(--bg);color:var(--fg);cursor:pointer}
.mic svg{width:18px;height:18px}
.mic[aria-pressed=true]{background:#dc2626;border-color:#dc2626;color:#fff}
.note{margin:0;align-self:center;font-size:12px;color:var(--dim)}
:host{--bg:#fff;--fg:#111827;--muted:#f1f3f5;--line:#d0d5dd;--dim:#6b7280}
:host(.theme-dark){--bg:#1f2430;--fg:#f3f4f6;--muted:#2d3340;--line:#4b5263;--dim:#9ca3af}
@media (prefers-color-scheme:dark){:host(.theme-auto){--bg:#1f2430;--fg:#f3f4f6;--muted:#2d3340;--line:#4b5263;--dim:#9ca3af}}
@media (prefers-reduced-motion:no-preference){.panel{animation:svcw-in .15s ease-out}@keyframes svcw-in{from{opacity:0;transform:translateY(8px)}}}
`
