// The dashboard's one style sheet, served from our own origin (the CSP allows no inline style and
// nothing from elsewhere). System fonts; colours chosen for WCAG AA contrast on white.
export const DASHBOARD_CSS = `
*{box-sizing:border-box}
body{margin:0;font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1a1d21;background:#f6f7f9}
a{color:#0b57d0}
a:focus,button:focus,input:focus,select:focus{outline:3px solid #f59e0b;outline-offset:1px}
.banner{padding:.5rem 1rem;font-size:.95rem}
.banner.test{background:#ffedd5;color:#7c2d12;border-bottom:3px solid #ea580c}
.banner.live{background:#1f2937;color:#fff;border-bottom:3px solid #16a34a}
header.top{display:flex;flex-wrap:wrap;align-items:center;gap:.5rem 1rem;padding:.5rem 1rem;background:#fff;border-bottom:1px solid #d8dce2}
header.top .account{font-weight:600}
header.top nav{display:flex;flex-wrap:wrap;gap:.25rem .75rem;flex:1}
header.top nav a{text-decoration:none;padding:.15rem .25rem}
header.top nav a[aria-current=page]{border-bottom:2px solid #0b57d0;font-weight:600}
main{padding:1rem 1.25rem}
main.narrow{max-width:34rem;margin:2rem auto;background:#fff;border:1px solid #d8dce2;border-radius:6px}
h1{font-size:1.4rem;margin:.25rem 0 1rem}
h2{font-size:1.1rem;margin:1.5rem 0 .5rem}
.scroll{overflow-x:auto}
table{border-collapse:collapse;width:100%;background:#fff;border:1px solid #d8dce2}
th,td{text-align:left;padding:.4rem .6rem;border-bottom:1px solid #e5e7eb;vertical-align:top;white-space:nowrap}
td.wrap{white-space:normal;min-width:12rem}
td:not(.wrap) code{white-space:nowrap;word-break:normal}
th{background:#eef0f3;font-weight:600}
code{font:13px ui-monospace,SFMono-Regular,Menlo,monospace;word-break:break-all;white-space:normal}
pre.json{background:#fff;border:1px solid #d8dce2;padding:.75rem;overflow:auto;max-height:24rem;font-size:13px}
dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:.3rem 1rem;background:#fff;border:1px solid #d8dce2;padding:.75rem}
dl.facts dt{color:#4b5563}
dl.facts dd{margin:0}
.status{display:inline-block;padding:0 .4rem;border-radius:3px;background:#e5e7eb;font-size:.85rem}
.s-succeeded,.s-paid,.s-active,.s-enabled,.s-delivered,.s-done{background:#dcfce7;color:#14532d}
.s-failed,.s-cancelled,.s-revoked,.s-disabled,.s-expired,.s-returned{background:#fee2e2;color:#7f1d1d}
.s-pending,.s-processing,.s-requires_action,.s-open{background:#fef3c7;color:#78350f}
.form{display:flex;flex-wrap:wrap;align-items:end;gap:.5rem .75rem;margin:.5rem 0}
.form label{display:flex;flex-direction:column;font-size:.85rem;color:#374151}
.form.filters{background:#fff;border:1px solid #d8dce2;padding:.6rem}
main.narrow .form{flex-direction:column;align-items:stretch}
input,select{font:inherit;padding:.35rem .5rem;border:1px solid #9ca3af;border-radius:4px;min-width:10rem}
label+input,label+select{margin-top:-.35rem}
button{font:inherit;padding:.4rem .9rem;border:1px solid #0b57d0;background:#0b57d0;color:#fff;border-radius:4px;cursor:pointer}
.form.danger button{background:#b91c1c;border-color:#b91c1c}
.form.link{margin:0}
.form.link button{background:none;border:none;color:#0b57d0;text-decoration:underline;padding:0}
.notice{background:#e0f2fe;border:1px solid #7dd3fc;padding:.5rem .75rem}
.error{background:#fee2e2;border:1px solid #fca5a5;padding:.5rem .75rem}
.secret{background:#fffbeb;border:1px solid #fcd34d;padding:.5rem .75rem}
.visually-hidden{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
form.search{display:flex;gap:.25rem}
form.search input{min-width:12rem}
.empty{color:#4b5563}
.pager{margin:.75rem 0;display:flex;gap:1rem}
.actions{display:flex;flex-wrap:wrap;gap:1rem;align-items:end}
@media (max-width:640px){main{padding:.75rem}dl.facts{grid-template-columns:1fr}}
`;
