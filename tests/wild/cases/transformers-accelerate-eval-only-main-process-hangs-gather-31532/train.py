progress_bar = tqdm(range(num_epochs*len(train_dataloader)), total=total_steps, disable= not accelerator.is_main_process)
