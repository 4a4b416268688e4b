/** The list's bottom sheet and the flow's screen (served as `assets/overlays.css`). */
export const OVERLAYS_CSS = String.raw`
.overlay { position: absolute; inset: 0; z-index: 4; display: flex; flex-direction: column; justify-content: flex-end; }
.scrim { position: absolute; inset: 0; background: rgba(11, 20, 26, .45); animation: fade .15s ease-out; }
.sheet { position: relative; background: #fff; border-radius: 16px 16px 0 0; max-height: 80%; display: flex; flex-direction: column; animation: rise .18s ease-out; }
@keyframes rise { from { transform: translateY(40px); opacity: 0; } }
@keyframes fade { from { opacity: 0; } }
.sheet-head { position: relative; display: flex; align-items: center; justify-content: center; padding: 16px 48px 12px; border-bottom: 1px solid #e9edef; }
.sheet-title { font-weight: 600; font-size: 16px; }
.icon { border: 0; background: none; font-size: 16px; color: #54656f; cursor: pointer; padding: 6px; line-height: 1; }
.icon.close { position: absolute; left: 10px; top: 12px; }
.sheet-body { overflow-y: auto; padding: 4px 0 24px; }
.section-title { padding: 14px 20px 4px; color: #008069; font-size: 13.5px; font-weight: 500; }
.row-option { width: 100%; display: flex; align-items: center; gap: 12px; padding: 11px 20px; border: 0; background: none; text-align: left; font: inherit; cursor: pointer; }
.row-option:hover { background: #f5f6f6; }
.row-text { flex: 1; display: flex; flex-direction: column; gap: 1px; }
.row-title { font-size: 15.5px; color: #111b21; }
.row-desc { font-size: 13px; color: #667781; }
.radio { flex: none; width: 20px; height: 20px; border-radius: 50%; border: 2px solid #8696a0; }
.row-option:active .radio { border: 6px solid #00a884; }

.flow-screen .sheet { height: 92%; max-height: none; }
.flow-form { display: flex; flex-direction: column; height: 100%; min-height: 0; }
.flow-body { flex: 1; overflow-y: auto; padding: 12px 20px; display: flex; flex-direction: column; gap: 14px; }
.flow-meta { font-size: 11.5px; color: #667781; }
.field { display: flex; flex-direction: column; gap: 4px; font-size: 13px; color: #54656f; }
.field input, .field select, .kv input { padding: 11px 12px; border: 1px solid #d1d7db; border-radius: 8px; font: inherit; font-size: 15px; color: #111b21; background: #fff; }
.field input:focus, .field select:focus, .kv input:focus { outline: 2px solid #00a884; border-color: transparent; }
.field.check { flex-direction: row; align-items: center; gap: 10px; font-size: 15px; color: #111b21; }
.field.check input { width: 20px; height: 20px; accent-color: #00a884; }
.field-label { font-size: 13px; color: #54656f; }
.kv { display: flex; flex-direction: column; gap: 6px; padding-top: 6px; border-top: 1px dashed #d1d7db; }
.kv-rows { display: flex; flex-direction: column; gap: 6px; }
.kv-row { display: flex; gap: 6px; align-items: center; }
.kv-row input { flex: 1; min-width: 0; }
.kv-add { align-self: flex-start; border: 0; background: none; color: #008069; font: inherit; font-weight: 500; cursor: pointer; padding: 4px 0; }
.flow-error { color: #ea0038; font-size: 13px; }
.flow-error:empty { display: none; }
.flow-foot { padding: 12px 20px 26px; border-top: 1px solid #e9edef; display: flex; flex-direction: column; gap: 8px; align-items: center; }
.flow-foot small { color: #8696a0; font-size: 11px; }
.flow-submit { width: 100%; padding: 12px; border: 0; border-radius: 24px; background: #00a884; color: #fff; font: inherit; font-weight: 600; font-size: 15px; cursor: pointer; }
.flow-submit:disabled { opacity: .6; }
`;
