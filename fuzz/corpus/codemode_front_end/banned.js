return a["con" + "structor"];
