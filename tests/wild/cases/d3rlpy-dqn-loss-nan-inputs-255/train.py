actions=data['treatment']

observations_dwh=data[['disease','weight','heartattack']].to_numpy()

rewards = data['variable74']

m=len(actions)

terminals = np.repeat(1,m)

dataset_dwh = MDPDataset(observations_dwh, actions, rewards, terminals)

train_episodes_dwh, test_episodes_dwh = train_test_split(dataset_dwh)

q_func_dwh=d3rlpy.algos.DQN()

q_func_dwh.fit(train_episodes_dwh,test_episodes_dwh,scorers={'advantage': discounted_sum_of_advantage_scorer,
                                              'td_error': td_error_scorer, # smaller is better
                                              'value_scale': average_value_estimation_scorer
                                             })`
