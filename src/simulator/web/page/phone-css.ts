/** The page layout, the phone and the chat's bubbles (served as `assets/phone.css`). */
export const PHONE_CSS = String.raw`
:root {
  --wa-green: #008069; --wa-accent: #00a884; --wa-link: #027eb5; --chat-bg: #efeae2;
  --bubble-in: #ffffff; --bubble-out: #d9fdd3; --meta: #667781; --ink: #111b21; --tick: #53bdeb;
  --sms-in: #e6eef8; --sms-out: #cfe3fb; --sms-ink: #2c4a6e;
  font-family: -apple-system, BlinkMacSystemFont, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
}
* { box-sizing: border-box; }
body { margin: 0; min-height: 100vh; background: #d1d7db; color: var(--ink); }
.band { position: fixed; inset: 0 0 auto 0; height: 200px; background: var(--wa-accent); z-index: 0; }
.toolbar { position: relative; z-index: 1; display: flex; align-items: center; gap: 24px; padding: 14px 32px; color: #fff; font-size: 14px; }
.brand { font-weight: 700; font-size: 18px; letter-spacing: .2px; }
.brand span { font-weight: 400; opacity: .85; }
.picker select { margin-left: 6px; padding: 4px 8px; border-radius: 6px; border: 0; font: inherit; }
.you strong { font-variant-numeric: tabular-nums; }
button.link { background: none; border: 0; color: #fff; text-decoration: underline; cursor: pointer; font: inherit; opacity: .9; }
.layout { position: relative; z-index: 1; display: flex; gap: 28px; align-items: flex-start; justify-content: center; padding: 4px 24px 32px; flex-wrap: wrap; }

.phone { width: 390px; height: 800px; padding: 12px; border-radius: 52px; background: #1b1b1d;
  box-shadow: 0 0 0 2px #3a3a3c, 0 24px 60px rgba(0, 0, 0, .35); flex: none; }
.screen { position: relative; height: 100%; border-radius: 40px; overflow: hidden; display: flex; flex-direction: column; background: var(--chat-bg); }
.statusbar { display: flex; justify-content: space-between; padding: 10px 28px 4px; background: var(--wa-green); color: #fff; font-size: 13px; font-weight: 600; }
.statusbar .icons { font-size: 9px; letter-spacing: 1px; }
.wa-header { display: flex; align-items: center; gap: 10px; padding: 6px 12px 10px; background: var(--wa-green); color: #fff; }
.back { font-size: 20px; opacity: .9; }
.avatar { width: 38px; height: 38px; border-radius: 50%; background: #dfe5e7; color: var(--wa-green); display: grid; place-items: center; font-weight: 700; font-size: 18px; }
.who .name { font-weight: 600; font-size: 16px; }
.who .sub { font-size: 12px; opacity: .85; }

.chat { flex: 1; overflow-y: auto; padding: 10px 14px 14px; display: flex; flex-direction: column; gap: 3px;
  background-color: var(--chat-bg);
  background-image: radial-gradient(rgba(0, 0, 0, .035) 1.2px, transparent 1.3px), radial-gradient(rgba(0, 0, 0, .025) 1px, transparent 1.1px);
  background-size: 22px 22px, 34px 34px; background-position: 0 0, 11px 17px; }
.note { align-self: center; margin: 6px 0; padding: 5px 12px; border-radius: 8px; background: #fff; color: var(--meta); font-size: 12px;
  box-shadow: 0 1px .5px rgba(11, 20, 26, .13); text-align: center; max-width: 85%; }
.note.day { text-transform: uppercase; font-size: 11.5px; }
.note.secure { background: #ffeecd; color: #54656f; }
.msg { display: flex; flex-direction: column; max-width: 82%; margin-top: 2px; }
.msg.in { align-self: flex-start; }
.msg.out { align-self: flex-end; align-items: flex-end; }
.bubble { position: relative; padding: 6px 8px 8px 9px; border-radius: 8px; font-size: 14.2px; line-height: 19px; color: var(--ink);
  box-shadow: 0 1px .5px rgba(11, 20, 26, .13); overflow-wrap: anywhere; min-width: 90px; }
.bubble.in { background: var(--bubble-in); }
.bubble.out { background: var(--bubble-out); }
.bubble.tail.in { border-top-left-radius: 0; margin-top: 6px; }
.bubble.tail.out { border-top-right-radius: 0; margin-top: 6px; }
.bubble.tail.in::before, .bubble.tail.out::before { content: ""; position: absolute; top: 0; width: 8px; height: 13px; }
.bubble.tail.in::before { left: -8px; background: inherit; clip-path: polygon(100% 0, 0 0, 100% 100%); }
.bubble.tail.out::before { right: -8px; background: inherit; clip-path: polygon(0 0, 100% 0, 0 100%); }
.bubble.pending, .bubble.sending { opacity: .6; }
.bubble.failed { outline: 1.5px solid #ea0038; }
.bubble .text { white-space: pre-wrap; }
.bubble pre.text { margin: 0; font-size: 11px; }
.header-text { font-weight: 700; margin-bottom: 2px; }
.footer { color: var(--meta); font-size: 13px; margin-top: 3px; }
.meta { float: right; margin: 6px 0 -6px 12px; font-size: 11px; color: var(--meta); display: inline-flex; gap: 3px; align-items: center; line-height: 15px; }
.ticks { font-size: 12px; letter-spacing: -3px; padding-right: 3px; }
.ticks.read { color: var(--tick); }
.ticks.sending { letter-spacing: 0; }
.ticks.failed { color: #ea0038; letter-spacing: 0; font-weight: 700; }
.quote { border-left: 4px solid #06cf9c; background: rgba(11, 20, 26, .05); border-radius: 6px; padding: 4px 8px; margin: 0 0 4px; font-size: 12.5px; color: var(--meta); }

.actions { margin: 8px -8px -8px -9px; border-top: 1px solid #e9edef; clear: both; }
.action { width: 100%; padding: 10px; border: 0; background: none; color: var(--wa-link); font: inherit; font-weight: 500; cursor: pointer; border-radius: 0 0 8px 8px; }
.action:hover, .reply-button:hover { background: #f5f6f6; }
.icon-svg { width: 1em; height: 1em; fill: none; stroke: currentColor; stroke-width: 2; stroke-linecap: round; stroke-linejoin: round; flex: none; }
.action { display: flex; align-items: center; justify-content: center; gap: 7px; }
.action-icon { width: 17px; height: 17px; }
.ticks .icon-svg { width: 13px; height: 13px; vertical-align: -2px; }
.reply-buttons { display: flex; flex-direction: column; gap: 2px; margin-top: 2px; }
.reply-button { padding: 9px; border: 0; border-radius: 8px; background: var(--bubble-in); color: var(--wa-link); font: inherit; font-size: 14.2px;
  font-weight: 500; cursor: pointer; box-shadow: 0 1px .5px rgba(11, 20, 26, .13); }

.media { display: block; margin: -3px -5px 6px -6px; border-radius: 6px; overflow: hidden; background: #dfe5e7; }
.media.image { height: 170px; }
.media.image img { display: block; width: 100%; height: 100%; object-fit: cover; }
.media-missing { height: 100%; display: flex; flex-direction: column; align-items: center; justify-content: center; gap: 4px; color: #54656f; font-size: 13px;
  background: linear-gradient(135deg, #e4e9eb, #cfd8dc); }
.media-missing small { font-size: 10.5px; opacity: .75; max-width: 90%; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.media-icon { width: 42px; height: 42px; stroke-width: 1.4; color: #8696a0; }
.media.video { background: #0b141a; }
.media.video video { display: block; width: 100%; height: 170px; background: #0b141a; }
.video-link { display: flex; align-items: center; gap: 6px; padding: 6px 10px; color: #e9edef; font-size: 12.5px; text-decoration: none; }
.play-icon { fill: currentColor; width: 14px; height: 14px; }
.media.document { display: flex; align-items: center; gap: 10px; padding: 10px; background: #f0f2f5; color: var(--ink); text-decoration: none; }
.doc-badge { flex: none; width: 38px; height: 46px; border-radius: 4px; background: #e2463f; color: #fff; font-size: 10.5px; font-weight: 700; display: grid; place-items: center; }
.doc-text { display: flex; flex-direction: column; min-width: 0; }
.doc-name { font-weight: 500; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.doc-text small { color: var(--meta); font-size: 11.5px; }

.bubble.sms.in { background: var(--sms-in); color: var(--sms-ink); border: 1px dashed #9db7d5; }
.bubble.sms.out { background: var(--sms-out); color: var(--sms-ink); border: 1px dashed #86a9d1; }
.sms-label { display: inline-block; margin: 0 6px 2px 0; padding: 0 6px; border-radius: 4px; background: #3b6ea5; color: #fff; font-size: 10px; font-weight: 700;
  letter-spacing: .6px; line-height: 16px; vertical-align: 1px; }
.flow-sent { font-weight: 500; }
.flow-icon { color: var(--wa-accent); }
.answers { margin: 4px 0 0; display: grid; grid-template-columns: auto 1fr; gap: 1px 8px; font-size: 12.5px; }
.answers dt { color: var(--meta); }
.answers dd { margin: 0; }

.composer { display: flex; align-items: center; gap: 6px; padding: 8px 8px 22px; background: #f0f2f5; }
.composer input { flex: 1; min-width: 0; padding: 10px 14px; border: 0; border-radius: 22px; font: inherit; font-size: 15px; background: #fff; outline: none; }
.composer .mode { flex: none; width: 42px; height: 42px; border-radius: 50%; border: 0; background: #fff; color: var(--wa-green); font-weight: 700; font-size: 11px; cursor: pointer; }
.composer.sms { background: #e3ecf7; }
.composer.sms .mode { background: #3b6ea5; color: #fff; }
.send { flex: none; width: 44px; height: 44px; border-radius: 50%; border: 0; background: var(--wa-accent); color: #fff; font-size: 18px; cursor: pointer; }
.composer.sms .send { background: #3b6ea5; }
.toast { position: absolute; left: 16px; right: 16px; bottom: 84px; padding: 10px 14px; border-radius: 8px; background: #323739; color: #fff; font-size: 13px; z-index: 5; }
`;
