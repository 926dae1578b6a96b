import { prioritySchema } from "./src/config/priority-section.ts";

const show = (v: unknown) => {
  const r = prioritySchema.safeParse(v);
  console.log(
    JSON.stringify(r.success ? r.data : r.error.issues.map((i) => [i.code, i.path, i.message])),
  );
};
show(true);
show("yes");
show(null);
show({ classes: { bulk: { queue_depth: "x" } } });
show({ classes: { bulky: {} } });
show({
  tenants: { a: { max_class: "bulk", api_keys: ["k"] }, b: { max_class: "bulk", api_keys: "k" } },
});
show({ tenants: { a: {} } });
show(5);
show({ enabled: "maybe" });
