/** The simulator page's HTML shell; everything in it is filled in by `assets/app.js`. */

function escapeAttr(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** The page, with its assets under `base` (where the router is mounted, say `/simulator`). */
export function pageHtml(base: string): string {
  const b = escapeAttr(base);
  return `<!doctype html>
<html lang="en" data-base="${b}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Colloquy simulator</title>
<link rel="stylesheet" href="${b}/assets/phone.css">
<link rel="stylesheet" href="${b}/assets/overlays.css">
<link rel="stylesheet" href="${b}/assets/panels.css">
<script type="module" src="${b}/assets/app.js"></script>
</head>
<body>
<div class="band" aria-hidden="true"></div>
<header class="toolbar">
  <div class="brand">Colloquy <span>simulator</span></div>
  <label class="picker" id="bot-picker">Bot <select id="bot-select" aria-label="Bot"></select></label>
  <div class="you">You are <strong id="user-number"></strong> <button type="button" id="new-user" class="link">new user</button></div>
</header>
<main class="layout">
  <section class="phone" aria-label="Phone">
    <div class="screen" id="screen">
      <div class="statusbar" aria-hidden="true"><span>9:41</span><span class="icons">&#9679;&#9679;&#9679;&#9679; &#9646;</span></div>
      <div class="wa-header">
        <span class="back" aria-hidden="true">&#8592;</span>
        <span class="avatar" id="avatar" aria-hidden="true"></span>
        <div class="who"><div class="name" id="bot-name"></div><div class="sub"><span id="bot-number"></span> &middot; <span id="presence">connecting&hellip;</span></div></div>
      </div>
      <div class="chat" id="chat" role="log" aria-live="polite"></div>
      <form class="composer" id="composer" autocomplete="off">
        <button type="button" id="mode" class="mode" aria-pressed="false" title="Send by WhatsApp or by SMS">WA</button>
        <input id="text" name="text" placeholder="Message" aria-label="Message" maxlength="4096">
        <button type="submit" id="send" class="send" aria-label="Send">&#10148;</button>
      </form>
      <div class="toast" id="toast" role="status" hidden></div>
    </div>
  </section>
  <aside class="panels">
    <section class="panel">
      <h2>Conversation</h2>
      <div id="state"></div>
    </section>
    <section class="panel requests-panel">
      <h2>Provider requests <span class="count" id="request-count">0</span></h2>
      <ol class="requests" id="requests"></ol>
    </section>
  </aside>
</main>
</body>
</html>
`;
}
