/// The console's script, served as `/static/console.js`: the live view of a running run
/// and confirmations before actions. The pages work without it (a running run's page
/// then shows the state it had when loaded; reload for more).
enum ConsoleScript {
    static let js = """
        "use strict";
        (function () {
          function live() {
            var section = document.getElementById("run-live");
            if (!section || !section.dataset.events || !window.EventSource) return;
            var state = document.getElementById("live-state");
            var source = new EventSource(section.dataset.events);
            if (state) state.dataset.live = "on";
            source.addEventListener("run", function (event) {
              // The fragment is the console's own markup, every piece of text in it escaped by the server.
              section.innerHTML = event.data;
            });
            source.addEventListener("done", function (event) {
              section.innerHTML = event.data;
              source.close();
              if (state) state.dataset.live = "off";
            });
          }
          function confirmations() {
            var forms = document.querySelectorAll("form[data-confirm]");
            for (var i = 0; i < forms.length; i++) {
              forms[i].addEventListener("submit", function (event) {
                if (!window.confirm(this.dataset.confirm)) event.preventDefault();
              });
            }
          }
          document.addEventListener("DOMContentLoaded", function () { live(); confirmations(); });
        })();
        """
}
