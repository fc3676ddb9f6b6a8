// The dashboard's entry point: the top bar, and the view of the address's route.
import { watchNetwork } from "./api.js";
import { experimentView, notFound } from "./experiment.js";
import { overviewView } from "./overview.js";
import { allowPlotly } from "./plots.js";
import { start } from "./router.js";
import { trialView } from "./trial.js";

const app = document.getElementById("app");
const connection = document.getElementById("connection");
let view = null;

watchNetwork((ok) => {
  connection.hidden = ok;
});

function show(route) {
  if (view && view.accepts && view.accepts(route)) {
    view.update(route);
    return;
  }
  if (view) view.destroy();
  view = null;
  window.scrollTo(0, 0);
  document.title = "hyperlab";
  if (route.view === "overview") view = overviewView(app, route);
  else if (route.view === "experiment") view = experimentView(app, route);
  else if (route.view === "trial") view = trialView(app, route);
  else notFound(app, "No such page", `Nothing lives at "#${route.path}".`);
}

start(show);
setTimeout(allowPlotly, 2500); // whatever the view: charts wait no longer than this
