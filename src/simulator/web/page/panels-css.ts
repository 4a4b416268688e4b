/** The state and requests panels beside the phone (served as `assets/panels.css`). */
export const PANELS_CSS = String.raw`
.panels { width: 540px; max-width: 100%; display: flex; flex-direction: column; gap: 18px; }
.panel { background: #fff; border-radius: 10px; padding: 14px 18px; box-shadow: 0 2px 8px rgba(11, 20, 26, .12); }
.panel h2 { margin: 0 0 10px; font-size: 15px; font-weight: 600; color: #3b4a54; display: flex; align-items: center; gap: 8px; }
.count { background: #e9edef; color: #54656f; border-radius: 10px; padding: 0 8px; font-size: 12px; font-weight: 600; }
.empty { color: #8696a0; font-size: 13px; margin: 4px 0; list-style: none; }
.state-line { display: flex; align-items: center; gap: 10px; }
.state-label { font-size: 12px; color: #667781; text-transform: uppercase; letter-spacing: .5px; }
.state-value { font-size: 20px; font-weight: 700; color: #008069; background: #e7f8f2; padding: 2px 10px; border-radius: 6px; }
.pill { border-radius: 10px; padding: 1px 9px; font-size: 12px; font-weight: 600; background: #e9edef; color: #54656f; }
.pill.status-active { background: #d9fdd3; color: #1d6b40; }
.pill.status-done { background: #dbeafe; color: #1e4e8c; }
.pill.status-failed { background: #fde2e4; color: #a4112a; }
.facts { display: grid; grid-template-columns: auto 1fr; gap: 3px 14px; margin: 12px 0 6px; font-size: 12.5px; }
.facts dt { color: #667781; }
.facts dd { margin: 0; }
.mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 11.5px; overflow-wrap: anywhere; }
.subhead { margin: 10px 0 4px; font-size: 11px; color: #667781; text-transform: uppercase; letter-spacing: .5px; }
.json { margin: 0; padding: 8px 10px; background: #f7f8fa; border: 1px solid #e9edef; border-radius: 6px; font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace;
  font-size: 11.5px; line-height: 1.45; max-height: 260px; overflow: auto; white-space: pre-wrap; overflow-wrap: anywhere; }
.requests-panel { max-height: 560px; display: flex; flex-direction: column; }
.requests { list-style: none; margin: 0; padding: 0; overflow-y: auto; display: flex; flex-direction: column; gap: 4px; }
.request summary { display: flex; align-items: center; gap: 8px; padding: 5px 6px; border-radius: 6px; cursor: pointer; font-size: 12.5px; list-style: none; }
.request summary::-webkit-details-marker { display: none; }
.request summary:hover, .request[open] summary { background: #f0f2f5; }
.request[open] { padding-bottom: 8px; }
.endpoint { flex: none; width: 74px; text-align: center; border-radius: 4px; padding: 1px 0; font-size: 11px; font-weight: 700; color: #fff; }
.ep-token { background: #8e6ccf; }
.ep-messaging { background: #00a884; }
.ep-sms { background: #3b6ea5; }
.path { flex: 1; min-width: 0; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 11.5px; color: #3b4a54; }
.fault { color: #a4112a; font-size: 11px; }
.status { flex: none; font-weight: 700; font-variant-numeric: tabular-nums; }
.status.ok { color: #1d8a4f; }
.status.warn { color: #b26b00; }
.status.bad { color: #ea0038; }
.status.wait { color: #8696a0; }
.request time { flex: none; color: #8696a0; font-size: 11px; font-variant-numeric: tabular-nums; }
@media (max-width: 1000px) { .panels { width: 390px; } }
`;
